import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { parseLineProtocol } from "../src/ingest/LineProtocol.js"
import { influxDbCases } from "./influxDbCases.js"

/**
 * The parser reads each body of the table as InfluxDB 1.x does (refused, or the same fields under the same names),
 * except for the deliberate differences the table names. The same table is compared with a running InfluxDB by the
 * end-to-end suite (`packages/server/test/e2e/lineprotocol.test.ts`).
 */
describe("parseLineProtocol reads bodies as InfluxDB 1.x does", () => {
  for (const c of influxDbCases) {
    // The byte order mark is the HTTP layer's: the parser sees the body without it.
    const body = c.layer === "http" ? c.body.replace(/^\ufeff/, "") : c.body
    const expected = c.dashstream ?? c.influxdb
    it(`${JSON.stringify(c.body)}: ${expected === "refused" ? "refused" : expected.join(", ")}`, () => {
      const result = parseLineProtocol(body, { precision: "s", maxFieldValues: 100 })
      const outcome = Either.isLeft(result) ? "refused" : [...new Set(result.right.streams)]
      assert.deepStrictEqual(
        outcome,
        expected === "refused" ? expected : [...expected],
        Either.isLeft(result) ? result.left.message : undefined
      )
    })
  }
})
