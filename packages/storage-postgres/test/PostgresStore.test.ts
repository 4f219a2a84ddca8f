import {
  blockSummaryFallbackSuite,
  changeFeedSuite,
  dashboardSuite,
  decimationSuite,
  rotationSuite,
  sessionSuite,
  storageSuite
} from "@dashstream/core/testing"
import { afterAll } from "@effect/vitest"
import { Effect } from "effect"
import pg from "pg"
import { freshSchemaLayer, freshSchemaName, openTestDatabase } from "../src/testing/index.js"

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
blockSummaryFallbackSuite("postgres", () => {
  const schema = freshSchemaName()
  return {
    layer: freshSchemaLayer(url, schema),
    // Another connection, as a backfill part-way or a corrupted summary would leave the table.
    change: (change) =>
      Effect.promise(async () => {
        const client = new pg.Client({ connectionString: url })
        await client.connect()
        try {
          const blocks = `${schema}.entry_blocks`
          const result = await client.query(
            change === "forget"
              ? `UPDATE ${blocks} SET summary = NULL WHERE summary IS NOT NULL`
              : `UPDATE ${blocks} SET summary = (SELECT summary FROM ${blocks} WHERE summary IS NOT NULL ` +
                  "ORDER BY first_ts LIMIT 1) WHERE summary IS NOT NULL"
          )
          return result.rowCount ?? 0
        } finally {
          await client.end()
        }
      })
  }
})
