import { defineConfig } from "vitest/config"
import { e2eProjects } from "./packages/server/vitest.config.js"
import { resolveSource } from "./vitest.shared.js"

export default defineConfig({
  ...resolveSource,
  test: {
    projects: ["packages/*", "examples/*", ...e2eProjects],
    // Most test files wait on child processes, sockets, fsync and PostgreSQL rather than compute: three files at a
    // time keep both cores of our machines busy (vitest's default on 2 cores is one file at a time).
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
