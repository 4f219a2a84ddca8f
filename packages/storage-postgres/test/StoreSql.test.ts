import { afterAll, assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { EntryWrite, Micros } from "@dashstream/core"
import pg from "pg"
import { EntryList } from "../src/internal/changePlan.js"
import {
  numberArray,
  numberArrayBinary,
  numberArrayText,
  sqlLiteral,
  textArray,
  textArrayText
} from "../src/internal/wireCodec.js"
import { openTestDatabase } from "../src/testing/index.js"

const db = await openTestDatabase()
afterAll(() => db.close())

// Texts as points and payloads may hold them: any Unicode but NUL (which PostgreSQL text cannot hold), with the
// characters that array and string literals treat specially made frequent.
const special = fc.constantFrom("'", '"', "\\", "{", "}", ",", " ", "NULL", "null", "\n", "E'", "$$", "é", "😀")
const text = fc
  .array(fc.oneof(special, fc.string({ unit: "binary", maxLength: 4 })), { maxLength: 8 })
  .map((parts) => parts.join("").replaceAll("\0", ""))

describe("the group commit's SQL literals", () => {
  it("property: text[] and number[] literals, inlined and as parameters, give back exactly what was written", async () => {
    const client = new pg.Client({ connectionString: db.url })
    await client.connect()
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(text, { maxLength: 6 }),
          fc.array(fc.option(fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))), {
            maxLength: 6
          }),
          async (texts, numbers) => {
            const inlined = await client.query<{ t: Array<string>; s: string; n: Array<number | null> }>(
              `SELECT ${textArray(texts)} AS t, ${sqlLiteral(texts.join(""))} AS s, ${numberArray(numbers, "float8")} AS n`
            )
            const row = inlined.rows[0]!
            assert.deepStrictEqual(row.t, texts)
            assert.strictEqual(row.s, texts.join(""))
            // -0 is stored as 0 (String(-0) is "0"); every other double round-trips exactly.
            assert.deepStrictEqual(
              row.n.map((n) => (n === null ? null : Number(n))),
              numbers.map((n) => (n === null ? null : n === 0 ? 0 : n))
            )
            const bound = await client.query<{ t: Array<string>; n: Array<number | null> }>(
              "SELECT $1::text[] AS t, $2::float8[] AS n",
              [textArrayText(texts), numberArrayText(numbers)]
            )
            assert.deepStrictEqual(bound.rows[0]!.t, texts)
            assert.deepStrictEqual(bound.rows[0]!.n, row.n)
          }
        ),
        { numRuns: 300 }
      )
    } finally {
      await client.end()
    }
  })

  it("property: number arrays in the binary format give back exactly what was written, nulls included", async () => {
    const client = new pg.Client({ connectionString: db.url })
    await client.connect()
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.option(fc.maxSafeInteger().chain((n) => fc.constantFrom(n, -n, n % 4294967296))), {
            maxLength: 6
          }),
          fc.array(fc.option(fc.double({ noNaN: true })), { maxLength: 6 }),
          async (integers, doubles) => {
            const bound = await client.query<{ i: Array<string | null>; d: Array<number | null>; n: number }>(
              "SELECT $1::bigint[] AS i, $2::float8[] AS d, cardinality($1::bigint[]) AS n",
              [numberArrayBinary(integers, "bigint"), numberArrayBinary(doubles, "float8")]
            )
            const row = bound.rows[0]!
            assert.deepStrictEqual(
              row.i.map((i) => (i === null ? null : Number(i))),
              integers.map((i) => (i === 0 ? 0 : i))
            )
            assert.deepStrictEqual(row.d, doubles)
            assert.strictEqual(row.n, integers.length)
          }
        ),
        { numRuns: 300 }
      )
      assert.throws(() => numberArrayBinary([1.5], "bigint"), /not a safe integer/)
      assert.throws(() => numberArrayBinary([2 ** 53], "bigint"), /not a safe integer/)
    } finally {
      await client.end()
    }
  })
})

describe("EntryList (a stream's net entries in a group)", () => {
  it("property: holds what a Map by ts holds, in its order, through writes, replacements, back-fills and clears", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.integer({ min: 0, max: 10 }),
            fc.constant("clear" as const),
            fc.constant("write" as const),
            fc.constant("back" as const),
            fc.constant("next" as const),
            fc.constant("next" as const)
          ),
          { maxLength: 60 }
        ),
        (ops) => {
          const list = new EntryList()
          const reference = new Map<number, EntryWrite>()
          let k = 0
          // A write's entries are at its base plus 0..10, or ("next") just after the write's previous entry, so they
          // mostly ascend; a "write" starts the next one 8 above the last, a "back" one 15 below it (a late
          // client's batch): ranges often disjoint, sometimes overlapping, `ts` sometimes repeated.
          let base = 0
          let previous = 0
          for (const op of ops) {
            if (op === "clear") {
              list.clear()
              reference.clear()
              continue
            }
            if (op === "write" || op === "back") {
              list.split()
              base = op === "write" ? base + 8 : base - 15
              previous = base
              continue
            }
            previous = op === "next" ? previous + 1 : base + op
            k++
            const entry: EntryWrite = {
              ts: (1e15 + previous) as Micros,
              point: { number: k },
              value: k,
              json: `{"number":${k}}`
            }
            list.set(entry)
            reference.set(entry.ts, entry)
          }
          list.finish()
          assert.deepStrictEqual(list.entries, [...reference.values()])
        }
      )
    )
  })
})
