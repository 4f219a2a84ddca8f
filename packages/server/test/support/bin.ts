import { join, resolve } from "node:path"

/** The repository root: the CLI runs from there, as `pnpm dashstream` does. */
export const repositoryRoot = resolve(import.meta.dirname, "../../../..")

/**
 * The node arguments that run the `dashstream` CLI in the tests' child processes: the bundled `bundle/bin.js`, on
 * plain node, as the published package's `bin` runs it. The server project's global setup (`buildSetup.ts`) brings
 * every `dist/` and the bundle up to date before any test runs, so a test never runs a stale build; a spawned process
 * starts in about half the CPU of the unbundled `dist/bin.js` and a sixth of transpiling the source through tsx.
 */
export const binArgs: ReadonlyArray<string> = [join(repositoryRoot, "packages/server/bundle/bin.js")]
