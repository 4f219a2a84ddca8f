import { readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { commandSpecs, commandUsage, usage } from "../src/Commands.js"
import { otherVariables, type ServeFlagSpec, serveFlags, type Variable } from "../src/ServeFlags.js"

/**
 * The declarations of `serve`'s flags (`ServeFlags.ts`) against what is derived from them (the usage text) and what is
 * written by hand from them: the flag tables of README "Configuration" and docs/api.md section 8.3.
 */

const flags = Object.entries(serveFlags) as ReadonlyArray<[string, ServeFlagSpec]>

const repository = new URL("../../../", import.meta.url)

/** The cells of each table row (`| a | b |`) of `file` between the heading line `from` and the next heading of its level. */
const tableRows = (file: string, from: string): ReadonlyArray<ReadonlyArray<string>> => {
  const lines = readFileSync(new URL(file, repository), "utf8").split("\n")
  const start = lines.indexOf(from)
  assert.isAtLeast(start, 0, `${file} has no heading ${JSON.stringify(from)}`)
  const level = from.split(" ")[0]!
  const end = lines.findIndex((line, i) => i > start && line.startsWith(`${level} `))
  return lines
    .slice(start + 1, end === -1 ? undefined : end)
    .filter((line) => line.startsWith("|"))
    .map((line) =>
      line
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((cell) => cell.trim())
    )
}

/** The table of `file` under `heading`, which lists every `serve` flag and the variables `others`. */
const documented = (file: string, heading: string, others: ReadonlyArray<Variable>) =>
  describe(`${file} ${heading}`, () => {
    const rows = tableRows(file, heading)

    it("has a row for every serve flag, with its environment variable", () => {
      for (const [name, spec] of flags) {
        const row = rows.find((cells) => new RegExp(`\`--${name}[\` ]`).test(cells[0] ?? ""))
        assert.isDefined(row, `no row for --${name}`)
        if (spec.env !== undefined) assert.include(row![1], spec.env.name, `the row of --${name}`)
        else assert.strictEqual(row![1], "", `the row of --${name} names a variable it does not read`)
      }
    })

    it("has a row for every other variable of the command line", () => {
      for (const variable of others) {
        assert.isTrue(
          rows.some((cells) => new RegExp(`\`${variable.name}[\`=]`).test(cells[1] ?? "")),
          `no row for ${variable.name}`
        )
      }
    })
  })

documented("README.md", "## Configuration", Object.values(otherVariables))
// `--db` and its variable have their own section there, 8.2.
documented(
  "docs/api.md",
  "### 8.3 Flags and environment of `serve`",
  Object.values(otherVariables).filter((variable) => variable !== otherVariables.db)
)

describe("serve's usage text", () => {
  it("shows every flag in its synopsis, and every variable in help's environment list", () => {
    const text = usage()
    assert.include(
      commandUsage(commandSpecs.serve),
      "pnpm dashstream serve [--host 127.0.0.1] [--port 8080] [--rate-limit N] [--log-requests] [--log-skipped] " +
        "[--decimate-at HH:MM|off] [--decimation-tiers 5m:48h,1h:14d,1d:90d] [--workers N] " +
        "[--cors-origin <origin>|*]... [--no-admin] [--frame-ancestors SOURCES] [--base-path /PREFIX] " +
        "[--trust-proxy <address or CIDR>[,...]] [--request-timeout SECONDS] [--demo] [--db URL]"
    )
    assert.include(
      text,
      "  DASHSTREAM_REQUEST_TIMEOUT  seconds to receive a whole request, headers and body, before a 408, as --request-timeout (default 30)"
    )
    for (const [, spec] of flags) if (spec.env !== undefined) assert.include(text, `\n  ${spec.env.name} `)
    for (const variable of Object.values(otherVariables)) assert.include(text, `\n  ${variable.name} `)
  })
})
