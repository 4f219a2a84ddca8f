import { assert, describe, it } from "@effect/vitest"
import { openTestDatabase, type TestDatabase } from "@dashstream/storage-postgres/testing"
import { alertsCliSuite } from "./alertsCliSuite.js"
import { cliSuite, timeout } from "./cliSuite.js"
import { cli } from "./support.js"

/**
 * The commands and the `serve` process lifecycle (docs/api.md section 8) on a PostgreSQL database. No PostgreSQL is a
 * failure here, not a skip.
 */
const open = async (): Promise<TestDatabase> => {
  const database = await openTestDatabase()
  return database
}

cliSuite("PostgreSQL", async () => {
  const database = await open()
  return { url: database.url, cleanup: database.close }
})

alertsCliSuite("PostgreSQL", async () => {
  const database = await open()
  return { url: database.url, cleanup: database.close }
})

describe("PostgreSQL, a new database", { timeout }, () => {
  it("accounts create works before any migrate or serve (every command migrates first)", async () => {
    const database = await open()
    try {
      const result = await cli(["accounts", "create", "--json", "--db", database.url])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.match(JSON.parse(result.stdout).accessKey, /^ds_[A-Za-z0-9_-]{43}$/)
    } finally {
      await database.close()
    }
  })
})
