import {
  changeFeedSuite,
  dashboardSuite,
  decimationSuite,
  rotationSuite,
  sessionSuite,
  storageSuite
} from "@dashstream/core/testing"
import { afterAll, describe, it } from "@effect/vitest"
import { freshSchemaLayer, openTestDatabase } from "../src/testing/index.js"

// One database for this file; every test of the contract suites gets its own fresh schema in it.
const db = await openTestDatabase()
afterAll(() => db?.close())

if (db === undefined) {
  describe.skip("storage contract: postgres (no PostgreSQL server)", () => {
    it("skipped", () => {})
  })
} else {
  storageSuite("postgres", () => freshSchemaLayer(db.url))
  decimationSuite("postgres", () => freshSchemaLayer(db.url))
  dashboardSuite("postgres", () => freshSchemaLayer(db.url))
  rotationSuite("postgres", () => freshSchemaLayer(db.url))
  changeFeedSuite("postgres", () => freshSchemaLayer(db.url))
  sessionSuite("postgres", () => freshSchemaLayer(db.url))
}
