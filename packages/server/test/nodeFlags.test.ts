import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { binArgs } from "./support/bin.js"
import { root, startServer, stop, tempDir } from "./support.js"

/**
 * `dashstream` runs node with young-generation semi-spaces of 64 MiB (see `src/bin.ts`): line protocol batches cost
 * about a third less CPU with them. V8 reads the flag only at start, so every way of starting the command
 * carries it: the bin's first line (the installed `dashstream` command, run by `env -S`) and the repository's
 * `pnpm dashstream` and `pnpm start` scripts.
 */
const flag = "--max-semi-space-size=64"

describe("the node flags dashstream runs with", () => {
  it("the repository's dashstream and start scripts run node with them", () => {
    const scripts = (
      JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }
    ).scripts
    expect(scripts["dashstream"]).toBe(`node ${flag} packages/server/bundle/bin.js`)
    expect(scripts["start"]).toBe(`node ${flag} packages/server/bundle/bin.js serve`)
  })

  it("the installed command and the bundle, started by their first line, are a node process with them", async () => {
    const manifest = JSON.parse(readFileSync(join(root, "packages/server/package.json"), "utf8")) as {
      bin: Record<string, string>
    }
    const installed = join(root, "packages/server", manifest.bin["dashstream"]!)
    for (const bin of [installed, binArgs[0]!]) {
      expect(readFileSync(bin, "utf8").split("\n", 1)[0]).toBe(`#!/usr/bin/env -S node ${flag}`)
      await startedWithFlag(bin)
    }
  }, 60_000)
})

/** Starts `serve` by executing `bin` as a program and checks that the node process carries {@link flag}. */
const startedWithFlag = async (bin: string) => {
  const dir = tempDir()
  try {
    // Executed as a program (not `node bin.js`): `env -S` splits the line, then execs node with the same pid.
    const server = await startServer(["--db", `sqlite:${join(dir.path, "flags.db")}`], undefined, 20_000, [bin])
    const argv = readFileSync(`/proc/${server.child.pid}/cmdline`, "utf8").split("\0")
    expect(argv[0]).toMatch(/node$/)
    expect(argv).toContain(flag)
    expect((await stop(server)).code).toBe(0)
  } finally {
    dir.remove()
  }
}
