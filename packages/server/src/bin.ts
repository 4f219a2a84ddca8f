#!/usr/bin/env -S node --max-semi-space-size=64
import { quickAnswer } from "./Commands.js"

/**
 * Entry point of `dashstream <command>`. The package's `bin` is this module bundled with everything it imports
 * (`bundle/bin.js`, by `scripts/bundle.mjs`); `pnpm dashstream` runs that from the repository.
 *
 * Node runs it with `--max-semi-space-size=64` (this file's first line, and the `dashstream` and `start` scripts of
 * the repository's package.json): young-generation semi-spaces of 64 MiB instead of V8's 16. A push's objects (a
 * line protocol body's thousands of entries) live until its group commit ends; with the default size the collector
 * copies or promotes many of them first. Measured: line protocol batches cost about a third less CPU per
 * request (SQLite, 1,399-1,531 µs against 2,071-2,303), for up to about 100 MiB more memory under load. V8 reads
 * the flag only when the process starts (`v8.setFlagsFromString` later changes nothing).
 *
 * `help` and `version` are answered from `Commands.ts` alone; every other command loads effect, the CLI and, on
 * demand, what the command uses (see `Cli.ts`), so startup stays short (bench/startup).
 *
 * `runMain` interrupts the program on the first SIGINT or SIGTERM; `serve` then closes the HTTP server (requests in
 * flight are answered) and the storage, and the process exits 0. A second signal gets node's default behaviour
 * (immediate exit); a shutdown that takes longer than {@link shutdownTimeoutMs} is cut short with exit code 1.
 */

const shutdownTimeoutMs = 15_000

const argv = process.argv.slice(2)
const quick = quickAnswer(argv)

if (quick !== undefined) {
  process.stdout.write(`${quick}\n`)
} else {
  const onSignal = () => {
    setTimeout(() => {
      process.stderr.write(`dashstream: shutdown did not finish within ${shutdownTimeoutMs / 1000} seconds; exiting\n`)
      process.exit(1)
    }, shutdownTimeoutMs).unref()
  }
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)

  const [NodeRuntime, { Cause, Exit }, Cli] = await Promise.all([
    import("@effect/platform-node/NodeRuntime"),
    import("effect"),
    import("./Cli.js")
  ])
  NodeRuntime.runMain(Cli.run(argv, process.env), {
    disableErrorReporting: true,
    disablePrettyLogger: true,
    teardown: (exit, onExit) =>
      onExit(Exit.isSuccess(exit) ? (exit.value as number) : Cause.isInterruptedOnly(exit.cause) ? 0 : 1)
  })
}
