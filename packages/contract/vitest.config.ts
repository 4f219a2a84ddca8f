import { defineProject } from "vitest/config"
import { resolveSource, sharedTest } from "../../vitest.shared.js"

export default defineProject({
  ...resolveSource,
  test: { ...sharedTest, name: "contract", include: ["test/**/*.test.ts"] }
})
