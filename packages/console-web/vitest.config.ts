import { defineProject } from "vitest/config"
import { resolveSource, sharedTest } from "../../vitest.shared.js"

export default defineProject({
  ...resolveSource,
  test: {
    ...sharedTest,
    name: "console-web",
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"]
  }
})
