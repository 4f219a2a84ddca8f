import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
import { InvalidPoint, PayloadTooLarge } from "../src/Errors.js"
import { defaultLimits, type Limits } from "../src/Limits.js"
import type { PointOp, StoredPoint } from "../src/Point.js"
import { decodePoint } from "../src/PointDecoder.js"
import { MAX_SECONDS, type Micros, secondsToMicros } from "../src/Time.js"
import { supportsClearCommand, type WidgetType, widgetTypes } from "../src/WidgetType.js"

const small: Limits = { ...defaultLimits, maxArrayElements: 3 }

const decodeOk = (type: WidgetType, point: unknown, limits: Limits = defaultLimits): PointOp => {
  const r = decodePoint(type, point, "point", limits)
  if (Either.isLeft(r)) {
    return assert.fail(`expected ${JSON.stringify(point)} to decode for ${type}, got ${r.left.path}: ${r.left.message}`)
  }
  return r.right
}

const decodeErr = (type: WidgetType, point: unknown, limits: Limits = defaultLimits, path = "point") => {
  const r = decodePoint(type, point, path, limits)
  if (Either.isRight(r)) {
    return assert.fail(`expected ${JSON.stringify(point)} to be rejected for ${type}, got ${JSON.stringify(r.right)}`)
  }
  assert.isTrue(r.left.message.length > 0)
  return r.left
}

/** Asserts an `InvalidPoint` at `path`, returns its message. */
const invalidAt = (type: WidgetType, point: unknown, path: string, base = "point"): string => {
  const e = decodeErr(type, point, defaultLimits, base)
  assert.instanceOf(e, InvalidPoint, e.message)
  assert.strictEqual(e.path, path, e.message)
  return e.message
}

const tooLargeAt = (type: WidgetType, point: unknown, path: string): void => {
  const e = decodeErr(type, point, small)
  assert.instanceOf(e, PayloadTooLarge, e.message)
  assert.strictEqual(e.path, path)
}

const put = (...points: ReadonlyArray<StoredPoint>): PointOp => ({
  _tag: "Put",
  entries: points.map((point) => ({ point }))
})

/** Asserts the decoded op equals `expected`, including the key order of the stored points (their JSON text). */
const expectOp = (type: WidgetType, point: unknown, expected: PointOp): void => {
  const op = decodeOk(type, point)
  assert.deepStrictEqual(op, expected)
  assert.strictEqual(JSON.stringify(op), JSON.stringify(expected))
}

const ts = (seconds: number): Micros => secondsToMicros(seconds)!

const numberFamily = ["number", "horizontal-bar", "vertical-bar", "dial"] as const
const seriesTypes = ["sparkline", "line-graph"] as const
const numericTypes = [...numberFamily, ...seriesTypes] as const
const clearCommandTypes = widgetTypes.filter(supportsClearCommand)
const emptyClearedTypes = widgetTypes.filter((t) => !supportsClearCommand(t))

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
      invalidAt(type, [{ number: 1, timestamp: 1 }], "point")
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
        invalidAt(
          type,
          [
            { number: 1, timestamp: 1 },
            { number: "x", timestamp: 2 }
          ],
          "point[1].number"
        )
        invalidAt(
          type,
          [
            { number: 1, timestamp: 1 },
            { number: 2, timestamp: 2e12 }
          ],
          "point[1].timestamp"
        )
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
        invalidAt(
          type,
          [
            { number: 1, timestamp: 5 },
            { number: 2, timestamp: 5 }
          ],
          "point[1].timestamp"
        )
        invalidAt(
          type,
          [
            { number: 1, timestamp: 5 },
            { number: 2, timestamp: 6 },
            { number: 3, timestamp: 4 }
          ],
          "point[2].timestamp"
        )
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

describe("decodePoint: maps", () => {
  for (const type of ["usa-map", "world-map"] as const) {
    describe(type, () => {
      it("stores {latitude, longitude, color?, title?, body?} in canonical order", () => {
        expectOp(
          type,
          { body: "b", title: "t", color: "blue", longitude: -74, latitude: 40.7, extra: 1 },
          put({ latitude: 40.7, longitude: -74, color: "blue", title: "t", body: "b" })
        )
        expectOp(type, { latitude: "40.7", longitude: " -74 " }, put({ latitude: 40.7, longitude: -74 }))
      })

      it("keeps the five colours", () => {
        for (const color of ["red", "blue", "green", "purple", "yellow"] as const) {
          expectOp(type, { latitude: 0, longitude: 0, color }, put({ latitude: 0, longitude: 0, color }))
        }
      })

      it("stores any other colour, or null, without a colour (not an error)", () => {
        for (const color of ["pink", "RED", "", null, 5, { r: 1 }]) {
          expectOp(type, { latitude: 0, longitude: 0, color }, put({ latitude: 0, longitude: 0 }))
        }
      })

      it("checks the latitude and longitude ranges (inclusive)", () => {
        expectOp(type, { latitude: 90, longitude: 180 }, put({ latitude: 90, longitude: 180 }))
        expectOp(type, { latitude: -90, longitude: -180 }, put({ latitude: -90, longitude: -180 }))
        invalidAt(type, { latitude: 90.01, longitude: 0 }, "point.latitude")
        invalidAt(type, { latitude: -91, longitude: 0 }, "point.latitude")
        invalidAt(type, { latitude: 0, longitude: 180.5 }, "point.longitude")
        invalidAt(type, { latitude: 0, longitude: -181 }, "point.longitude")
      })

      it("requires numeric latitude and longitude", () => {
        invalidAt(type, { longitude: 0 }, "point.latitude")
        invalidAt(type, { latitude: 0 }, "point.longitude")
        invalidAt(type, { latitude: "north", longitude: 0 }, "point.latitude")
      })

      it("rejects non-string title or body", () => {
        invalidAt(type, { latitude: 0, longitude: 0, title: 1 }, "point.title")
        invalidAt(type, { latitude: 0, longitude: 0, body: true }, "point.body")
        expectOp(type, { latitude: 0, longitude: 0, title: null }, put({ latitude: 0, longitude: 0 }))
      })

      it("accepts an array, one entry per element, errors at the element path", () => {
        expectOp(
          type,
          [
            { latitude: 1, longitude: 2 },
            { latitude: 3, longitude: 4, color: "green" }
          ],
          put({ latitude: 1, longitude: 2 }, { latitude: 3, longitude: 4, color: "green" })
        )
        invalidAt(
          type,
          [
            { latitude: 1, longitude: 2 },
            { latitude: 3, longitude: 200 }
          ],
          "point[1].longitude"
        )
        invalidAt(type, [{ latitude: 1, longitude: 2 }, 7], "point[1]")
        tooLargeAt(
          type,
          [1, 2, 3, 4].map(() => ({ latitude: 0, longitude: 0 })),
          "point"
        )
      })

      it("rejects a non-object point", () => {
        invalidAt(type, 42, "point")
        invalidAt(type, "somewhere", "point")
      })
    })
  }
})

describe("decodePoint: text-feed", () => {
  it("stores {title, msg, imgUrl?, date?} in canonical order", () => {
    expectOp(
      "text-feed",
      { date: "2024-01-01", imgUrl: "https://example.com/a.png", msg: "m", title: "t", x: 1 },
      put({ title: "t", msg: "m", imgUrl: "https://example.com/a.png", date: "2024-01-01" })
    )
    expectOp("text-feed", { title: "t", msg: "m", date: 1732000000 }, put({ title: "t", msg: "m", date: 1732000000 }))
    expectOp("text-feed", { title: "t", msg: "m", imgUrl: null, date: null }, put({ title: "t", msg: "m" }))
  })

  it("requires string title and msg", () => {
    invalidAt("text-feed", { msg: "m" }, "point.title")
    invalidAt("text-feed", { title: "t" }, "point.msg")
    invalidAt("text-feed", { title: "t", msg: 5 }, "point.msg")
  })

  it("requires imgUrl to be an absolute http(s) URL", () => {
    for (const url of ["ftp://example.com/a.png", "/a.png", "a.png", "http:foo", "http://", "javascript:alert(1)", 5]) {
      invalidAt("text-feed", { title: "t", msg: "m", imgUrl: url }, "point.imgUrl")
    }
    expectOp(
      "text-feed",
      { title: "t", msg: "m", imgUrl: "HTTP://Example.com:8080/x?y=1#z" },
      put({ title: "t", msg: "m", imgUrl: "HTTP://Example.com:8080/x?y=1#z" })
    )
  })

  it("rejects a date that is neither string nor number", () => {
    invalidAt("text-feed", { title: "t", msg: "m", date: { y: 2024 } }, "point.date")
  })

  it("accepts an array", () => {
    expectOp(
      "text-feed",
      [
        { title: "a", msg: "1" },
        { title: "b", msg: "2" }
      ],
      put({ title: "a", msg: "1" }, { title: "b", msg: "2" })
    )
    invalidAt("text-feed", [{ title: "a", msg: "1" }, { title: "b" }], "point[1].msg")
    tooLargeAt(
      "text-feed",
      [1, 2, 3, 4].map(() => ({ title: "a", msg: "1" })),
      "point"
    )
  })
})

describe("decodePoint: gallery", () => {
  it("stores {title, msg?, imgUrl}", () => {
    expectOp(
      "gallery",
      { imgUrl: "http://example.com/a.jpg", title: "t", extra: 1 },
      put({ title: "t", imgUrl: "http://example.com/a.jpg" })
    )
    expectOp(
      "gallery",
      { imgUrl: "http://example.com/a.jpg", msg: "m", title: "t" },
      put({ title: "t", msg: "m", imgUrl: "http://example.com/a.jpg" })
    )
  })

  it("requires title and imgUrl", () => {
    invalidAt("gallery", { title: "t" }, "point.imgUrl")
    invalidAt("gallery", { imgUrl: "http://example.com/a.jpg" }, "point.title")
    invalidAt("gallery", { title: "t", imgUrl: "not a url" }, "point.imgUrl")
  })

  it("takes a single item, not an array", () => {
    invalidAt("gallery", [{ title: "t", imgUrl: "http://example.com/a.jpg" }], "point")
  })
})

describe("decodePoint: xy-graph", () => {
  it("stores {x, y}", () => {
    expectOp("xy-graph", { y: 2, x: 1, z: 3 }, put({ x: 1, y: 2 }))
    expectOp("xy-graph", { x: "1.5", y: "-2" }, put({ x: 1.5, y: -2 }))
  })

  it("requires numeric x and y", () => {
    invalidAt("xy-graph", { x: 1 }, "point.y")
    invalidAt("xy-graph", { x: "NaN", y: 1 }, "point.x")
  })

  it("accepts an array", () => {
    expectOp(
      "xy-graph",
      [
        { x: 1, y: 2 },
        { x: 3, y: 4 }
      ],
      put({ x: 1, y: 2 }, { x: 3, y: 4 })
    )
    invalidAt("xy-graph", [{ x: 1, y: 2 }, { x: 3 }], "point[1].y")
    tooLargeAt(
      "xy-graph",
      [1, 2, 3, 4].map((x) => ({ x, y: x })),
      "point"
    )
  })
})

describe("decodePoint: leaderboard", () => {
  it("stores the whole board in the order given, items in canonical order", () => {
    expectOp(
      "leaderboard",
      {
        leaderboard: [
          { value: 1, name: "low", suffix: "pts" },
          { name: "high", value: "10", prefix: "#", x: 1 },
          { name: "mid", value: 5, prefix: null }
        ]
      },
      put({
        leaderboard: [
          { name: "low", value: 1, suffix: "pts" },
          { name: "high", value: 10, prefix: "#" },
          { name: "mid", value: 5 }
        ]
      })
    )
  })

  it("decodes leaderboardItem", () => {
    expectOp(
      "leaderboard",
      { leaderboardItem: { value: "3", name: "a", suffix: "x" } },
      {
        _tag: "LeaderboardItem",
        item: { name: "a", value: 3, suffix: "x" }
      }
    )
    invalidAt("leaderboard", { leaderboardItem: { name: "a" } }, "point.leaderboardItem.value")
    invalidAt("leaderboard", { leaderboardItem: [{ name: "a", value: 1 }] }, "point.leaderboardItem")
  })

  it("rejects both leaderboard and leaderboardItem", () => {
    invalidAt(
      "leaderboard",
      { leaderboard: [{ name: "a", value: 1 }], leaderboardItem: { name: "b", value: 2 } },
      "point.leaderboardItem"
    )
  })

  it("points errors at the item and field", () => {
    const board = [{ name: "a", value: 1 }, { name: "b", value: 2 }, { name: "c" }]
    invalidAt("leaderboard", { leaderboard: board }, "point.leaderboard[2].value")
    invalidAt("leaderboard", { leaderboard: board }, "streams[3].point.leaderboard[2].value", "streams[3].point")
    invalidAt("leaderboard", { leaderboard: [{ name: 1, value: 1 }] }, "point.leaderboard[0].name")
    invalidAt("leaderboard", { leaderboard: [{ name: "a", value: 1 }, "b"] }, "point.leaderboard[1]")
    invalidAt("leaderboard", { leaderboard: [{ name: "a", value: 1, prefix: 2 }] }, "point.leaderboard[0].prefix")
    invalidAt("leaderboard", { leaderboard: { name: "a", value: 1 } }, "point.leaderboard")
  })

  it("rejects other shapes", () => {
    invalidAt("leaderboard", 42, "point")
    invalidAt("leaderboard", { chart: [{ name: "a", value: 1 }] }, "point")
    invalidAt("leaderboard", [{ name: "a", value: 1 }], "point")
  })

  it("limits the board length", () => {
    tooLargeAt(
      "leaderboard",
      { leaderboard: [1, 2, 3, 4].map((i) => ({ name: `${i}`, value: i })) },
      "point.leaderboard"
    )
  })
})

describe("decodePoint: pie-chart", () => {
  const items = [
    { name: "a", value: 1, color: "red" },
    { name: "b", value: "2", prefix: "$" }
  ]
  const stored = put({
    leaderboard: [
      { name: "a", value: 1 },
      { name: "b", value: 2, prefix: "$" }
    ]
  })

  it("accepts the board under leaderboard or chart, stored as leaderboard", () => {
    expectOp("pie-chart", { leaderboard: items }, stored)
    expectOp("pie-chart", { chart: items }, stored)
  })

  it("rejects both keys, leaderboardItem and bad items", () => {
    invalidAt("pie-chart", { leaderboard: items, chart: items }, "point.chart")
    invalidAt("pie-chart", { leaderboardItem: { name: "a", value: 1 } }, "point")
    invalidAt("pie-chart", { chart: [{ name: "a", value: "lots" }] }, "point.chart[0].value")
  })

  it("limits the chart length", () => {
    tooLargeAt("pie-chart", { chart: [1, 2, 3, 4].map((i) => ({ name: `${i}`, value: i })) }, "point.chart")
  })
})

describe("decodePoint: bar-chart", () => {
  it("stores {chart: [{name, value, color?}]}", () => {
    expectOp(
      "bar-chart",
      {
        chart: [
          { color: "yellow", value: 3, name: "a" },
          { name: "b", value: "4", color: null, prefix: "$" }
        ]
      },
      put({
        chart: [
          { name: "a", value: 3, color: "yellow" },
          { name: "b", value: 4 }
        ]
      })
    )
  })

  it("accepts the chart under leaderboard too, stored as chart", () => {
    expectOp(
      "bar-chart",
      { leaderboard: [{ name: "a", value: 1, color: "#ff0000" }] },
      put({ chart: [{ name: "a", value: 1, color: "#ff0000" }] })
    )
  })

  it("rejects a non-string colour, both keys and bad items", () => {
    invalidAt("bar-chart", { chart: [{ name: "a", value: 1, color: 3 }] }, "point.chart[0].color")
    invalidAt("bar-chart", { chart: [], leaderboard: [] }, "point.leaderboard")
    invalidAt("bar-chart", { leaderboard: [{ name: "a", value: 1 }, { value: 1 }] }, "point.leaderboard[1].name")
  })

  it("limits the chart length", () => {
    tooLargeAt("bar-chart", { chart: [1, 2, 3, 4].map((i) => ({ name: `${i}`, value: i })) }, "point.chart")
  })
})

describe("decodePoint: list", () => {
  it("stores {list: [{listItem}]}", () => {
    expectOp(
      "list",
      { list: [{ listItem: "a", x: 1 }, { listItem: "b" }] },
      put({ list: [{ listItem: "a" }, { listItem: "b" }] })
    )
  })

  it("decodes listItem", () => {
    expectOp("list", { listItem: "top" }, { _tag: "ListItem", listItem: "top" })
    // The original Python and Ruby clients send numbers as list items: stored as their text, like table cells.
    expectOp("list", { listItem: 5 }, { _tag: "ListItem", listItem: "5" })
    expectOp("list", { list: [{ listItem: 1.5 }] }, put({ list: [{ listItem: "1.5" }] }))
    invalidAt("list", { listItem: true }, "point.listItem")
  })

  it("rejects bad items and both keys", () => {
    invalidAt("list", { list: ["a"] }, "point.list[0]")
    invalidAt("list", { list: [{ listItem: "a" }, { listItem: null }] }, "point.list[1].listItem")
    invalidAt("list", { list: [{ listItem: "a" }], listItem: "b" }, "point.listItem")
    invalidAt("list", { list: "a" }, "point.list")
    invalidAt("list", "a", "point")
  })

  it("limits the list length", () => {
    tooLargeAt("list", { list: [1, 2, 3, 4].map((i) => ({ listItem: `${i}` })) }, "point.list")
  })
})

describe("decodePoint: table", () => {
  it("stores {table}, numbers as strings", () => {
    expectOp(
      "table",
      {
        table: [
          ["name", "score"],
          ["a", 1.5],
          [2, "b"]
        ]
      },
      put({
        table: [
          ["name", "score"],
          ["a", "1.5"],
          ["2", "b"]
        ]
      })
    )
  })

  it("decodes tableRow, numbers as strings", () => {
    expectOp("table", { tableRow: ["a", 7] }, { _tag: "TableRow", row: ["a", "7"] })
    invalidAt("table", { tableRow: "a" }, "point.tableRow")
    invalidAt("table", { tableRow: [] }, "point.tableRow")
    invalidAt("table", { tableRow: ["a", null] }, "point.tableRow[1]")
  })

  it("rejects bad cells, ragged rows and both keys", () => {
    invalidAt(
      "table",
      {
        table: [
          ["h1", "h2"],
          ["a", true]
        ]
      },
      "point.table[1][1]"
    )
    invalidAt("table", { table: [["h1", "h2"], ["a", "b"], ["c"]] }, "point.table[2]")
    invalidAt("table", { table: [["h1"], "row"] }, "point.table[1]")
    invalidAt("table", { table: [[]] }, "point.table[0]")
    invalidAt("table", { table: [["h"]], tableRow: ["a"] }, "point.tableRow")
    invalidAt("table", { table: "a,b" }, "point.table")
  })

  it("limits the number of rows and the width of a row", () => {
    tooLargeAt("table", { table: [["h"], ["a"], ["b"], ["c"]] }, "point.table")
    tooLargeAt("table", { table: [["a", "b", "c", "d"]] }, "point.table[0]")
    tooLargeAt("table", { tableRow: ["a", "b", "c", "d"] }, "point.tableRow")
  })
})

describe("decodePoint: multi-bar-graph", () => {
  it("stores {matrix}: header strings, labels as strings, numbers as numbers", () => {
    expectOp(
      "multi-bar-graph",
      {
        matrix: [
          ["", "2023", "2024"],
          ["north", 1, "2.5"],
          [7, 3, 4]
        ]
      },
      put({
        matrix: [
          ["", "2023", "2024"],
          ["north", 1, 2.5],
          ["7", 3, 4]
        ]
      })
    )
    expectOp("multi-bar-graph", { matrix: [["corner", "s"]] }, put({ matrix: [["corner", "s"]] }))
  })

  it("requires one number per series on every later row", () => {
    invalidAt(
      "multi-bar-graph",
      {
        matrix: [
          ["", "a", "b"],
          ["x", 1]
        ]
      },
      "point.matrix[1]"
    )
    invalidAt(
      "multi-bar-graph",
      {
        matrix: [
          ["", "a", "b"],
          ["x", 1, 2, 3]
        ]
      },
      "point.matrix[1]"
    )
    invalidAt(
      "multi-bar-graph",
      {
        matrix: [
          ["", "a", "b"],
          ["x", 1, "lots"]
        ]
      },
      "point.matrix[1][2]"
    )
    invalidAt(
      "multi-bar-graph",
      {
        matrix: [
          ["", "a"],
          [null, 1]
        ]
      },
      "point.matrix[1][0]"
    )
    invalidAt("multi-bar-graph", { matrix: [["", "a"], "x"] }, "point.matrix[1]")
  })

  it("requires a header row of strings with at least one series", () => {
    invalidAt(
      "multi-bar-graph",
      {
        matrix: [
          ["", 5],
          ["x", 1]
        ]
      },
      "point.matrix[0][1]"
    )
    invalidAt("multi-bar-graph", { matrix: [[""]] }, "point.matrix[0]")
    invalidAt("multi-bar-graph", { matrix: ["", "a"] }, "point.matrix[0]")
    invalidAt("multi-bar-graph", { matrix: "x" }, "point.matrix")
    invalidAt("multi-bar-graph", { chart: [] }, "point")
  })

  it("limits rows and series", () => {
    tooLargeAt(
      "multi-bar-graph",
      {
        matrix: [
          ["", "a"],
          ["x", 1],
          ["y", 2],
          ["z", 3]
        ]
      },
      "point.matrix"
    )
    tooLargeAt("multi-bar-graph", { matrix: [["", "a", "b", "c"]] }, "point.matrix[0]")
  })
})

describe("decodePoint: image, label, html", () => {
  it("stores {imgUrl} for an absolute http(s) URL", () => {
    expectOp("image", { imgUrl: "https://example.com/i.png", x: 1 }, put({ imgUrl: "https://example.com/i.png" }))
    invalidAt("image", { imgUrl: "data:image/png;base64,AAAA" }, "point.imgUrl")
    invalidAt("image", { imgUrl: "//example.com/i.png" }, "point.imgUrl")
    invalidAt("image", { url: "https://example.com/i.png" }, "point.imgUrl")
    invalidAt("image", "https://example.com/i.png", "point")
  })

  it("stores {label}", () => {
    expectOp("label", { label: "hello" }, put({ label: "hello" }))
    invalidAt("label", { label: 5 }, "point.label")
    invalidAt("label", { text: "x" }, "point.label")
  })

  it("stores {html} as given", () => {
    expectOp("html", { html: "<b>hi</b><script>x</script>" }, put({ html: "<b>hi</b><script>x</script>" }))
    invalidAt("html", { html: ["<b>"] }, "point.html")
  })
})

describe("decodePoint: empty points (docs/api.md section 4)", () => {
  const empties: ReadonlyArray<unknown> = [null, "", {}, []]

  for (const type of emptyClearedTypes) {
    it(`${type}: null, "", {} and [] clear the stream`, () => {
      for (const point of empties)
        assert.deepStrictEqual(decodeOk(type, point), { _tag: "Clear" }, JSON.stringify(point))
    })
  }

  it("the widget's collection key holding [] clears it", () => {
    const cases: ReadonlyArray<readonly [WidgetType, unknown]> = [
      ["leaderboard", { leaderboard: [] }],
      ["pie-chart", { leaderboard: [] }],
      ["pie-chart", { chart: [] }],
      ["bar-chart", { chart: [] }],
      ["bar-chart", { leaderboard: [] }],
      ["list", { list: [] }],
      ["table", { table: [] }],
      ["multi-bar-graph", { matrix: [] }]
    ]
    for (const [type, point] of cases) assert.deepStrictEqual(decodeOk(type, point), { _tag: "Clear" }, type)
  })

  for (const type of clearCommandTypes) {
    it(`${type}: null, "" and {} are invalid and point to the clear command; [] stores nothing`, () => {
      for (const point of [null, "", {}]) {
        const message = invalidAt(type, point, "point")
        assert.include(message, `"command": "clear"`)
      }
      assert.deepStrictEqual(decodeOk(type, []), { _tag: "Put", entries: [] })
    })
  }

  it("the clear-command types are exactly the six of docs/api.md section 4", () => {
    assert.deepStrictEqual(clearCommandTypes, [
      "sparkline",
      "line-graph",
      "usa-map",
      "world-map",
      "text-feed",
      "xy-graph"
    ])
  })
})

describe("decodePoint: robustness", () => {
  it("property: any JSON value, for any widget type, gives a result or a domain error (never throws)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...widgetTypes), fc.jsonValue(), (type, point) => {
        const r = decodePoint(type, point, "point", small)
        if (Either.isLeft(r)) {
          assert.isTrue(r.left instanceof InvalidPoint || r.left instanceof PayloadTooLarge)
          assert.isString(r.left.path)
          assert.isTrue(r.left.path!.startsWith("point"))
        }
      }),
      { numRuns: 2000 }
    )
  })

  it("property: stored points contain only the keys of their type (unknown fields dropped)", () => {
    const extra = fc.dictionary(
      fc.string().filter((k) => !["number", "delta", "prefix", "suffix", "timestamp"].includes(k)),
      fc.jsonValue()
    )
    fc.assert(
      fc.property(extra, fc.integer(), (fields, n) => {
        const op = decodeOk("number", { ...fields, number: n })
        assert.deepStrictEqual(op, put({ number: n }))
      })
    )
  })
})
