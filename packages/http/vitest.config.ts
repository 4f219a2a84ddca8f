import { defineProject } from "vitest/config"
import { resolveSource, sharedTest } from "../../vitest.shared.js"

export default defineProject({
  ...resolveSource,
  test: { ...sharedTest, name: "http", include: ["test/**/*.test.ts"] }
})
