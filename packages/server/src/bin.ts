#!/usr/bin/env node
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Exit } from "effect"
import * as Cli from "./Cli.js"

/**
 * Entry point of `pnpm dashstream <command>` (root script `tsx packages/server/src/bin.ts`).
 *
 * `runMain` interrupts the program on the first SIGINT or SIGTERM; `serve` then closes the HTTP server (requests in
 * flight are answered) and the storage, and the process exits 0. A second signal gets node's default behaviour
 * (immediate exit); a shutdown that takes longer than {@link shutdownTimeoutMs} is cut short with exit code 1.
 */

const shutdownTimeoutMs = 15_000

const onSignal = () => {
  setTimeout(() => {
    process.stderr.write(`dashstream: shutdown did not finish within ${shutdownTimeoutMs / 1000} seconds; exiting\n`)
    process.exit(1)
  }, shutdownTimeoutMs).unref()
}
process.once("SIGINT", onSignal)
process.once("SIGTERM", onSignal)

NodeRuntime.runMain(Cli.run(process.argv.slice(2), process.env), {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown: (exit, onExit) =>
    onExit(Exit.isSuccess(exit) ? (exit.value as number) : Cause.isInterruptedOnly(exit.cause) ? 0 : 1)
})
