import { defineProject } from "vitest/config"

export default defineProject({
  test: { name: "embed", include: ["test/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 300_000 }
})
