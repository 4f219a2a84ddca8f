import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { Either } from "effect"
import { decodePoint } from "../src/PointDecoder.js"
import { MAX_SECONDS } from "../src/Time.js"
import { InvalidPoint } from "../src/Errors.js"
import { defaultLimits } from "../src/Limits.js"
import {
  decodeOk,
  expectOp,
  invalidAt,
  numberFamily,
  numericTypes,
  put,
  seriesTypes,
  small,
  stamped,
  tooLargeAt,
  ts
} from "./pointDecoderSupport.js"

describe("decodePoint: numbers (docs/api.md section 3, Numbers)", () => {
  for (const type of numericTypes) {
    describe(type, () => {
      it("accepts a bare number", () => {
        expectOp(type, 42, put({ number: 42 }))
        expectOp(type, -0.5, put({ number: -0.5 }))
        expectOp(type, 0, put({ number: 0 }))
      })

      it("accepts numeric strings and stores numbers", () => {
        for (const [text, n] of [
          ["42", 42],
          [" 3.5 ", 3.5],
          ["-1e3", -1000],
          ["+7", 7],
          [".5", 0.5],
          ["5.", 5],
          ["2.5E-3", 0.0025],
          ["\t12\n", 12]
        ] as const) {
          expectOp(type, text, put({ number: n }))
        }
      })

      it("rejects non-numeric strings, NaN and Infinity with path `point`", () => {
        for (const text of [
          "abc",
          "0x10",
          "0b1",
          "Infinity",
          "-Infinity",
          "NaN",
          "1_000",
          "1,5",
          "1e",
          "e5",
          " ",
          "1e999"
        ]) {
          invalidAt(type, text, "point")
        }
      })

      it("rejects booleans", () => {
        invalidAt(type, true, "point")
        invalidAt(type, false, "point")
      })

      it("accepts {number, prefix?, suffix?} and stores them in canonical order", () => {
        expectOp(type, { suffix: "%", number: 12, prefix: "$" }, put({ number: 12, prefix: "$", suffix: "%" }))
        expectOp(type, { number: "12.5" }, put({ number: 12.5 }))
        expectOp(type, { number: 1, prefix: null, suffix: null }, put({ number: 1 }))
      })

      it("ignores unknown fields", () => {
        expectOp(type, { number: 1, color: "red", label: "x", extra: { a: 1 } }, put({ number: 1 }))
      })

      it("rejects a non-string prefix or suffix", () => {
        invalidAt(type, { number: 1, prefix: 5 }, "point.prefix")
        invalidAt(type, { number: 1, suffix: ["%"] }, "point.suffix")
      })

      it("rejects a non-numeric number field", () => {
        invalidAt(type, { number: "ten" }, "point.number")
        invalidAt(type, { number: null }, "point.number")
        invalidAt(type, { number: true }, "point.number")
      })

      it("requires number or delta", () => {
        const message = invalidAt(type, { prefix: "$" }, "point.number")
        assert.match(message, /number/)
      })

      it("takes a client timestamp in UNIX seconds (number or numeric string)", () => {
        expectOp(
          type,
          { number: 5, timestamp: 1732000000 },
          { _tag: "Put", entries: [{ point: { number: 5 }, ts: ts(1732000000) }] }
        )
        expectOp(
          type,
          { number: 5, timestamp: "1732000000.25" },
          {
            _tag: "Put",
            entries: [{ point: { number: 5 }, ts: ts(1732000000.25) }]
          }
        )
        expectOp(type, { number: 5, timestamp: null }, put({ number: 5 }))
        expectOp(type, { number: 5, timestamp: 0 }, { _tag: "Put", entries: [{ point: { number: 5 }, ts: ts(0) }] })
      })

      it("rejects a millisecond, negative or non-numeric timestamp, saying seconds", () => {
        const ms = invalidAt(type, { number: 5, timestamp: 1732000000000 }, "point.timestamp")
        assert.match(ms, /seconds/)
        assert.match(ms, /milliseconds/)
        assert.include(ms, String(MAX_SECONDS))
        invalidAt(type, { number: 5, timestamp: -1 }, "point.timestamp")
        invalidAt(type, { number: 5, timestamp: MAX_SECONDS + 1 }, "point.timestamp")
        invalidAt(type, { number: 5, timestamp: "yesterday" }, "point.timestamp")
        invalidAt(type, { number: 5, timestamp: "2024-01-01T00:00:00Z" }, "point.timestamp")
      })

      it("accepts {delta, prefix?, suffix?, timestamp?}", () => {
        expectOp(type, { delta: 3 }, { _tag: "Delta", delta: 3 })
        expectOp(type, { delta: "-2.5" }, { _tag: "Delta", delta: -2.5 })
        expectOp(
          type,
          { timestamp: 1700000000, suffix: "s", delta: 1, prefix: "+" },
          {
            _tag: "Delta",
            delta: 1,
            prefix: "+",
            suffix: "s",
            ts: ts(1700000000)
          }
        )
        expectOp(type, { delta: 0, prefix: null }, { _tag: "Delta", delta: 0 })
      })

      it("rejects both number and delta", () => {
        const message = invalidAt(type, { number: 1, delta: 2 }, "point.delta")
        assert.match(message, /not both/)
      })

      it("rejects a non-numeric delta", () => {
        invalidAt(type, { delta: "a lot" }, "point.delta")
        invalidAt(type, { delta: null }, "point.delta")
      })

      it("puts error paths under the given point path", () => {
        invalidAt(type, { number: 1, timestamp: "x" }, "streams[3].point.timestamp", "streams[3].point")
      })

      it("property: any finite double, bare or as its String() text, is stored as that number", () => {
        fc.assert(
          fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
            const expected = put({ number: d })
            assert.deepStrictEqual(decodeOk(type, d), expected)
            assert.deepStrictEqual(decodeOk(type, String(d)), put({ number: Number(String(d)) }))
          })
        )
      })
    })
  }

  for (const type of numberFamily) {
    it(`${type} rejects a non-empty array`, () => {
      invalidAt(type, [1], "point")
      invalidAt(type, stamped([1, 1]), "point")
    })
  }
})

describe("decodePoint: sparkline and line-graph arrays", () => {
  for (const type of seriesTypes) {
    describe(type, () => {
      it("accepts an array of {number, timestamp} with prefix/suffix kept", () => {
        expectOp(
          type,
          [
            { number: 1, timestamp: 100 },
            { timestamp: "100.5", number: "2", suffix: "ms", x: 1 }
          ],
          {
            _tag: "Put",
            entries: [
              { point: { number: 1 }, ts: ts(100) },
              { point: { number: 2, suffix: "ms" }, ts: ts(100.5) }
            ]
          }
        )
      })

      it("rejects bare numbers in an array, with the element path", () => {
        invalidAt(type, [1, 2], "point[0]")
        invalidAt(type, [{ number: 1, timestamp: 1 }, "2"], "point[1]")
      })

      it("needs a timestamp on every element", () => {
        const message = invalidAt(type, [{ number: 1, timestamp: 1 }, { number: 2 }], "point[1].timestamp")
        assert.match(message, /timestamp/)
      })

      it("rejects delta inside an array", () => {
        invalidAt(type, [{ delta: 1, timestamp: 1 }], "point[0].delta")
      })

      it("rejects a bad element number or timestamp with its path", () => {
        invalidAt(type, stamped([1, 1], ["x", 2]), "point[1].number")
        invalidAt(type, stamped([1, 1], [2, 2e12]), "point[1].timestamp")
        invalidAt(
          type,
          [
            { number: 1, timestamp: 1 },
            { number: 2, timestamp: 2, prefix: 3 }
          ],
          "streams[0].point[1].prefix",
          "streams[0].point"
        )
      })

      it("requires strictly increasing timestamps (equal or lower rejects the whole array)", () => {
        invalidAt(type, stamped([1, 5], [2, 5]), "point[1].timestamp")
        invalidAt(type, stamped([1, 5], [2, 6], [3, 4]), "point[2].timestamp")
      })

      it("rejects an array longer than maxArrayElements with PayloadTooLarge", () => {
        const four = [1, 2, 3, 4].map((i) => ({ number: i, timestamp: i }))
        tooLargeAt(type, four, "point")
        const op = decodeOk(type, four.slice(0, 3), small)
        assert.strictEqual(op._tag === "Put" ? op.entries.length : -1, 3)
      })

      it("property: an array decodes iff its timestamps strictly increase, one entry per element", () => {
        fc.assert(
          fc.property(fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 8 }), (seconds) => {
            const points = seconds.map((s, i) => ({ number: i, timestamp: s }))
            const increasing = seconds.every((s, i) => i === 0 || s > seconds[i - 1]!)
            const r = decodePoint(type, points, "point", defaultLimits)
            assert.strictEqual(Either.isRight(r), increasing)
            if (Either.isRight(r)) {
              assert.deepStrictEqual(r.right, {
                _tag: "Put",
                entries: seconds.map((s, i) => ({ point: { number: i }, ts: ts(s) }))
              })
            } else {
              assert.instanceOf(r.left, InvalidPoint)
              const bad = seconds.findIndex((s, i) => i > 0 && s <= seconds[i - 1]!)
              assert.strictEqual(r.left.path, `point[${bad}].timestamp`)
            }
          })
        )
      })
    })
  }
})

describe("decodePoint: timestamp on other widget types is an unknown field", () => {
  it("is ignored and not stored", () => {
    expectOp("xy-graph", { x: 1, y: 2, timestamp: "not a time" }, put({ x: 1, y: 2 }))
    expectOp("usa-map", { latitude: 1, longitude: 2, timestamp: 1 }, put({ latitude: 1, longitude: 2 }))
    expectOp("label", { label: "a", timestamp: 1 }, put({ label: "a" }))
  })
})
