import { join } from "node:path"
import { alertsCliSuite } from "./alertsCliSuite.js"
import { cliSuite } from "./cliSuite.js"
import { tempDir } from "./support.js"

/** The commands and the `serve` process lifecycle (docs/api.md section 8) on a SQLite file. */
cliSuite("SQLite", async () => {
  const dir = tempDir()
  return {
    url: `sqlite:${join(dir.path, "nested", "dashstream.db")}`,
    cleanup: async () => dir.remove()
  }
})

alertsCliSuite("SQLite", async () => {
  const dir = tempDir()
  return { url: `sqlite:${join(dir.path, "alerts.db")}`, cleanup: async () => dir.remove() }
})
