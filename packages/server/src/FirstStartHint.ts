import { existsSync, readFileSync, realpathSync } from "node:fs"
import { dirname, isAbsolute, join, resolve } from "node:path"
import { Redacted } from "effect"
import type { AdminSetting, DatabaseConfig } from "./Config.js"
import * as Storage from "./Storage.js"

/**
 * What `serve` prints on an empty database (docs/api.md section 8.3): commands that make a first account, declare a
 * widget and push a point, each runnable as printed, in order, in a POSIX shell in the directory `serve` was started
 * from (the first one keeps the access key in `$KEY` for the others).
 */

/** The package manager the repository's commands are run with, as the README writes it. */
export const pnpm = "npx --yes pnpm@10.34.9"

/** Where the running `dashstream` comes from: a clone of the repository (its root), or an installed package. */
export type Origin =
  { readonly _tag: "Repository"; readonly root: string } | { readonly _tag: "Package"; readonly bin: string }

/**
 * The {@link Origin} of the script `script` (default the running one, `process.argv[1]`): a repository when a folder
 * above it holds `pnpm-workspace.yaml` and a `package.json` with a `dashstream` script, else the package whose bin
 * it is (its real path, symbolic links of `node_modules/.bin` followed).
 */
export const originOf = (script: string = process.argv[1] ?? ""): Origin => {
  const bin = existsSync(script) ? realpathSync(script) : resolve(script)
  for (let dir = dirname(bin); dir !== dirname(dir); dir = dirname(dir)) {
    if (!existsSync(join(dir, "pnpm-workspace.yaml"))) continue
    try {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { scripts?: object }
      if (manifest.scripts !== undefined && "dashstream" in manifest.scripts) return { _tag: "Repository", root: dir }
    } catch {
      // No readable manifest: not the repository.
    }
  }
  return { _tag: "Package", bin }
}

/**
 * How a printed command runs `dashstream` from the directory `cwd`: `npx --yes pnpm@10.34.9 -s dashstream` in the
 * repository's root (`-C <root>` added elsewhere; `-s` keeps pnpm's own lines off standard output), else
 * `node <bin>`. `sameDirectory` says whether the command runs in `cwd` (then a relative SQLite path means the same
 * file to it as to the server).
 */
export const commandOf = (
  origin: Origin,
  cwd: string
): { readonly command: string; readonly sameDirectory: boolean } =>
  origin._tag === "Package"
    ? { command: `node ${shellQuote(origin.bin)}`, sameDirectory: true }
    : origin.root === cwd
      ? { command: `${pnpm} -s dashstream`, sameDirectory: true }
      : { command: `${pnpm} -C ${shellQuote(origin.root)} -s dashstream`, sameDirectory: false }

/**
 * The `--db` flag the printed commands need to open the server's database: a relative SQLite path made absolute
 * when the command runs in another directory (`sameDirectory` false); else none when the database came from
 * `DASHSTREAM_DB` (the shell that started the server has it) or is the default; else the URL as given, or
 * `--db <your --db URL>` for a URL with a password, which is never printed.
 */
const dbFlag = (db: DatabaseConfig, sameDirectory: boolean, cwd: string): string => {
  if (db.database._tag === "Sqlite" && !sameDirectory && !isAbsolute(db.database.filename)) {
    return ` --db ${shellQuote(`sqlite:${resolve(cwd, db.database.filename)}`)}`
  }
  if (db.source !== "flag") return ""
  return Storage.holdsSecret(db.database) ? " --db <your --db URL>" : ` --db ${shellQuote(Redacted.value(db.url))}`
}

/** The parts of the server the hint speaks of. */
export interface HintContext {
  readonly db: DatabaseConfig
  readonly admin: AdminSetting
  /** The admin token of this run (a first run's, which the console line printed too), if any. */
  readonly adminToken: string | undefined
  /** The listening URL, with the base path (`Dashstream listening on <url>`); a wildcard host is shown as 127.0.0.1. */
  readonly url: string
  /** The demo account is there (`serve --demo`): the operator has none of their own yet. */
  readonly demo: boolean
  readonly origin?: Origin
  readonly cwd?: string
}

/** Reads a JSON answer's field on standard input with node (which every machine running Dashstream has). */
const field = (name: string) => `node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).${name}'`

/**
 * The first-start hint: commands that make an account ("My dashboard"), declare a widget `revenue` of type number and
 * push 42 to it, with the command line, then with the admin API when a token is configured (`$DASHSTREAM_ADMIN_TOKEN`);
 * a first run's token is printed only in the Console link, so the hint points there. The lines that start with two
 * spaces are the commands.
 */
export const firstStartHint = (context: HintContext): string => {
  const cwd = context.cwd ?? process.cwd()
  const { command, sameDirectory } = commandOf(context.origin ?? originOf(), cwd)
  const db = dbFlag(context.db, sameDirectory, cwd)
  const base = context.url.replace(/^http:\/\/(0\.0\.0\.0|\[::\])(?=:)/, "http://127.0.0.1")
  const admin = context.admin
  const auth = `-H "Authorization: Bearer $DASHSTREAM_ADMIN_TOKEN"`
  return [
    "",
    `${context.demo ? "Besides the demo, the" : "The"} database has no accounts yet. Make one, declare a widget with ` +
      "its access key and push a point (in a shell, in this directory):",
    "",
    `  KEY=$(${command} accounts create --name "My dashboard" --json${db} | ${field("accessKey")})`,
    `  ${command} widgets create --access-key "$KEY" --stream revenue --type number${db}`,
    `  curl -fsS ${base}/customSend -d '{"accessKey":"'"$KEY"'","streamName":"revenue","point":42}'`,
    "",
    ...(admin._tag === "Off"
      ? [
          "The admin API and the console are off (--no-admin, or no DASHSTREAM_ADMIN_TOKEN on an address that is not loopback).",
          ""
        ]
      : admin._tag === "FirstRun"
        ? // The run's token is printed once, in the Console link, and nowhere else.
          ["Or open the Console link above in a browser.", ""]
        : [
            "Or use the admin API, with DASHSTREAM_ADMIN_TOKEN set in your shell as in the server's:",
            "",
            `  ID=$(curl -fsS ${auth} ${base}/admin/accounts -d '{"name":"My dashboard"}' | ${field("id")})`,
            `  curl -fsS ${auth} "${base}/admin/accounts/$ID/widgets" -d '{"streamName":"revenue","type":"number"}'`,
            ""
          ])
  ].join("\n")
}

/** `text` as one shell word: as it is when it needs no quoting, else in single quotes. */
export const shellQuote = (text: string): string =>
  /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'"'"'`)}'`
