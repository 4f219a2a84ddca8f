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
