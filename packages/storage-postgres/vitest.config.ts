import { defineProject } from "vitest/config"
import { resolveSource, sharedTest } from "../../vitest.shared.js"

export default defineProject({
  ...resolveSource,
  test: {
    ...sharedTest,
    name: "storage-postgres",
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000
  }
})
