import { alertStoreSuite } from "@dashstream/core/testing"
import { afterAll } from "@effect/vitest"
import { freshSchemaLayer, openTestDatabase } from "../src/testing/index.js"

// One database for this file; every test gets its own fresh schema in it. A missing PostgreSQL fails the file.
const db = await openTestDatabase()
afterAll(() => db?.close())
if (db === undefined) throw new Error("no PostgreSQL server: the alert store contract needs one")
const url = db.url

alertStoreSuite("postgres", () => freshSchemaLayer(url))
