import { alertEngineSuite, alertStoreSuite } from "@dashstream/core/testing"
import { afterAll } from "@effect/vitest"
import { Effect } from "effect"
import { layer, migrate, parseUrl } from "../src/index.js"
import { freshSchemaLayer, openTestDatabase, withSchema } from "../src/testing/index.js"
import { freshSchema } from "./fixtures.js"

// One database for this file; every test gets its own fresh schema in it. A missing PostgreSQL fails the file.
const db = await openTestDatabase()
afterAll(() => db.close())
const url = db.url

alertStoreSuite("postgres", () => freshSchemaLayer(url), { sharedByProcesses: true })

// Each "process" opens its own pool (and listening connection) on one migrated schema.
alertEngineSuite("postgres", () =>
  Effect.gen(function* () {
    const config = yield* parseUrl(withSchema(url, freshSchema("alerts")))
    yield* migrate(config)
    return () => layer(config)
  })
)
