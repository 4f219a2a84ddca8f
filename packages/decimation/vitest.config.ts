import { defineProject } from "vitest/config"
import { resolveSource } from "../../vitest.shared.js"

export default defineProject({
  ...resolveSource,
  test: { name: "decimation", include: ["test/**/*.test.ts"] }
})
