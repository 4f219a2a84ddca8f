import { defineProject } from "vitest/config"

export default defineProject({ test: { name: "decimation", include: ["test/**/*.test.ts"] } })
