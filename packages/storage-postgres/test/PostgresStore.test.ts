import {
  changeFeedSuite,
  dashboardSuite,
  decimationSuite,
  rotationSuite,
  sessionSuite,
  storageSuite
} from "@dashstream/core/testing"
import { afterAll } from "@effect/vitest"
import { freshSchemaLayer, openTestDatabase } from "../src/testing/index.js"

// One database for this file; every test of the contract suites gets its own fresh schema in it. A missing
// PostgreSQL fails the file: the contract is not shown to hold on a backend it never ran against.
const db = await openTestDatabase()
afterAll(() => db.close())
const url = db.url

storageSuite("postgres", () => freshSchemaLayer(url))
decimationSuite("postgres", () => freshSchemaLayer(url))
dashboardSuite("postgres", () => freshSchemaLayer(url))
rotationSuite("postgres", () => freshSchemaLayer(url))
changeFeedSuite("postgres", () => freshSchemaLayer(url))
sessionSuite("postgres", () => freshSchemaLayer(url))
