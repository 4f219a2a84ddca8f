import { defineConfig } from "vitest/config"
import { resolveSource } from "./vitest.shared.js"

export default defineConfig({
  ...resolveSource,
  test: {
    // packages/server/vitest.workers.config.ts: part of the e2e suite again, against `serve --workers 2`.
    projects: ["packages/*", "examples/*", "packages/server/vitest.workers.config.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
