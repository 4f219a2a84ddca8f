import { join, resolve } from "node:path"

/** The repository root: the CLI runs from there, as `pnpm dashstream` does. */
export const repositoryRoot = resolve(import.meta.dirname, "../../../..")

/**
 * The node arguments that run the `dashstream` CLI in the tests' child processes: the compiled `dist/bin.js`, on
 * plain node, as the published package runs it. The server project's global setup (`buildSetup.ts`) brings every
 * `dist/` up to date with `tsc -b` before any test runs, so a test never runs a stale build; a spawned process then
 * starts in about a third of the time (and CPU) that transpiling the source through tsx on every spawn took.
 */
export const binArgs: ReadonlyArray<string> = [join(repositoryRoot, "packages/server/dist/bin.js")]
