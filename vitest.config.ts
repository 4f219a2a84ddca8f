import { defineConfig } from "vitest/config"
import { resolveSource } from "./vitest.shared.js"

export default defineConfig({
  ...resolveSource,
  test: {
    projects: ["packages/*", "examples/*"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
