import { defineProject } from "vitest/config"
import { resolveSource } from "../../vitest.shared.js"

export default defineProject({
  ...resolveSource,
  test: { name: "http", include: ["test/**/*.test.ts"] }
})
