import { defineProject } from "vitest/config"
import { resolveSource, sharedTest } from "../../vitest.shared.js"

export default defineProject({
  ...resolveSource,
  test: {
    ...sharedTest,
    name: "dashboard-web",
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts", "../../test/screenshotSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000
  }
})
