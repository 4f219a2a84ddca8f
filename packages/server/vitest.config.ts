import { defineProject } from "vitest/config"
import { resolveSource } from "../../vitest.shared.js"

export default defineProject({
  ...resolveSource,
  test: {
    name: "server",
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/buildSetup.ts", "test/support/browserSetup.ts"]
  }
})
