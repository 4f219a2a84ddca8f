import type { ViteUserConfig } from "vitest/config"

/**
 * The export condition under which every `@dashstream/*` package resolves to its TypeScript source (`src/`) instead
 * of its build (`dist/`); see `exports` in each package.json. Tests, type-checking (`customConditions` in
 * tsconfig.base.json) and processes the tests spawn (`node --conditions=@dashstream/source --import tsx`) all use it,
 * so a test always runs the source as it is now, never a stale build.
 */
export const sourceCondition = "@dashstream/source"

const serverConditions = [sourceCondition, "module", "node", "development|production"]

/**
 * Vite's resolve options with {@link sourceCondition} first, for the root and every package's `vitest.config.ts`:
 * for the test files (Vite's `ssr` environment) and for global setup files (Vitest's own `__vitest__` environment).
 * Setting `conditions` replaces Vite's defaults, so they are repeated (`development|production` is Vite's placeholder
 * for the mode's condition).
 */
export const resolveSource: Pick<ViteUserConfig, "resolve" | "ssr" | "environments"> = {
  resolve: { conditions: [sourceCondition, "module", "browser", "development|production"] },
  ssr: { resolve: { conditions: serverConditions } },
  environments: { __vitest__: { resolve: { conditions: serverConditions } } }
}

/**
 * Test options every project shares. `isolate: false`: the files a vitest worker runs share one module graph instead
 * of a fresh process each, so effect and the packages are imported once per worker rather than once per file (the
 * whole suite: about 30 s less on our 2-core machines, measured 343 s against 373 s). No test file may leave global
 * state behind: fake timers are restored in `afterEach`, environment variables put back, servers and databases
 * closed in `afterAll`.
 *
 * `testTimeout` 30 s and `hookTimeout` 60 s, as the root vitest.config.ts says: the root's own values do not reach the
 * projects it lists by config file, which ran with vitest's 5 s. A 400-run property test of the decimation selection
 * took 5.5 s once in a fresh-clone run on a loaded 2-core machine and failed on that timeout alone. A project's own
 * larger timeouts, listed after these, still win.
 */
export const sharedTest = { isolate: false, testTimeout: 30_000, hookTimeout: 60_000 } as const
