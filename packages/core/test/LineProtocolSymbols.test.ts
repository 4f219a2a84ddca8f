import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
import { type LineBatch, parseLineProtocol, parseLineProtocolInFull } from "../src/ingest/LineProtocol.js"
import { decodeLineProtocol } from "../src/ingest/LineProtocolRequest.js"
import { KnownSeries, LineSymbols } from "../src/ingest/LineProtocolSymbols.js"

/**
 * The table of known series kept from body to body (`LineSymbols`, docs/api.md section 13.1's parser): a body parsed
 * after others gives what it gives alone, whatever series and field keys the earlier bodies left in the table.
 */

const options = { precision: "ns", maxFieldValues: 100_000 } as const

/** Each write as [stream, field key, number, text, timestamp, line], or the error's message. */
const outcome = (result: Either.Either<LineBatch, { message: string }>) =>
  Either.isLeft(result)
    ? result.left.message
    : Array.from({ length: result.right.size }, (_, i) => [
        result.right.stream(i),
        result.right.fieldKeys[i],
        result.right.numbers[i],
        result.right.text(i),
        result.right.timestamps[i],
        result.right.lines[i]
      ])

// A few series and field keys, escapes, duplicate tags and reordered tags among them, so bodies meet each other's.
const series = fc.constantFrom(
  "cpu,host=a",
  "cpu,host=b",
  "cpu,cpu=cpu0,host=a",
  "cpu,host=a,cpu=cpu0",
  "m\\ x,t\\=k=v\\,w",
  "cpu,host=a,host=b",
  "mem",
  "m\\,n"
)
const field = fc.constantFrom("x", "y", "usage_idle", "f\\ g", "h\\=i")
const value = fc.constantFrom("1", "-2.5", "3i", "t", '"s"', "1e3")
const line = fc
  .tuple(series, fc.array(fc.tuple(field, value), { minLength: 1, maxLength: 4 }), fc.option(fc.nat(5), { nil: null }))
  .map(([s, fields, ts]) => `${s} ${fields.map(([k, v]) => `${k}=${v}`).join(",")}${ts === null ? "" : ` ${ts}`}`)
const body = fc.array(line, { minLength: 1, maxLength: 12 }).map((lines) => lines.join("\n"))

describe("line protocol series kept from body to body", () => {
  it("property: each body of a sequence parses as it does alone, from a string or from its bytes", () => {
    fc.assert(
      fc.property(fc.array(body, { minLength: 1, maxLength: 6 }), (bodies) => {
        for (const text of bodies) {
          const alone = outcome(parseLineProtocolInFull(text, options))
          assert.deepStrictEqual(outcome(parseLineProtocol(text, options)), alone, text)
          const bytes = Buffer.from(text, "utf8")
          assert.deepStrictEqual(outcome(parseLineProtocol(text, { ...options, bytes })), alone, text)
        }
      }),
      { numRuns: 500 }
    )
  })

  it("keeps copies of the names' text, not views of a body's bytes, which the server may reuse", () => {
    // Series no other test of this file parses, so that this body puts them in the table.
    const first = Buffer.from("q,t=x v=1\ndisk,dev=a v=1\n")
    assert.deepStrictEqual(outcome(parseLineProtocol(first.toString(), { ...options, bytes: first }))[1], [
      "disk.v{dev=a}",
      "v",
      1,
      "1",
      -1,
      2
    ])
    // The request's buffer is reused for another body: what the table holds must not change with it.
    first.write("q,t=x v=1\ndisk,dev=b v=1\n")
    const second = Buffer.from("q,t=x v=1\ndisk,dev=b v=1\n")
    const streams = outcome(parseLineProtocol(second.toString(), { ...options, bytes: second }))
    assert.deepStrictEqual(
      (streams as Array<Array<unknown>>).map((w) => w[0]),
      ["q.v{t=x}", "disk.v{dev=b}"]
    )
  })

  it("is bounded: past its units it starts again, and a series over the bound alone is never kept", () => {
    const symbols = new LineSymbols<string, string>(4)
    // Each costs a little more than a quarter of the bound (its text twice, see `LineSymbols.keep`): three fit.
    const series = [0, 1, 2, 3].map(
      (slot) => new KnownSeries<string, string>(slot, new Uint8Array(LineSymbols.maxUnits / 8), "s")
    )
    for (const s of series.slice(0, 3)) symbols.keep(s)
    assert.isTrue(
      [0, 1, 2].every((slot) => symbols.at(slot) === series[slot]),
      "three fit"
    )
    // A fourth passes the bound: the table starts again with it alone.
    symbols.keep(series[3]!)
    assert.isTrue([0, 1, 2].every((slot) => symbols.at(slot) === undefined))
    assert.isTrue(symbols.at(3) === series[3])
    const huge = new KnownSeries<string, string>(0, new Uint8Array(LineSymbols.maxUnits), "huge")
    symbols.keep(huge)
    assert.isTrue(symbols.at(0) === undefined)
    assert.isTrue(symbols.at(3) === series[3], "a series never kept does not empty the table")
    assert.isFalse(symbols.keepField(0, LineSymbols.maxUnits))
  })

  it("a request's streams are distinct even when two series texts name one stream", () => {
    const request = Either.getOrThrow(decodeLineProtocol("cpu,a=1,b=2 v=1 1\ncpu,b=2,a=1 v=2 2\nmem v=3 3", "k", "ns"))
    const columns = request.columns!
    assert.deepStrictEqual(columns.names, ["cpu.v{a=1,b=2}", "mem.v"])
    assert.deepStrictEqual(Array.from(columns.streamOf), [0, 0, 1])
    assert.strictEqual(columns.size, 3)
    assert.strictEqual(columns.path(2), "line 3")
    assert.deepStrictEqual(
      request.parts.map((p) => [p.streamName, p.path]),
      [
        ["cpu.v{a=1,b=2}", "line 1"],
        ["cpu.v{a=1,b=2}", "line 2"],
        ["mem.v", "line 3"]
      ]
    )
  })
})
