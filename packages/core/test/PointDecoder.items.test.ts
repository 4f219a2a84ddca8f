import { clearCommandTypes as contractClearCommandTypes } from "@dashstream/contract"
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { Either } from "effect"
import { type WidgetType, widgetTypes } from "../src/WidgetType.js"
import { decodePoint } from "../src/PointDecoder.js"
import { InvalidPoint, PayloadTooLarge } from "../src/Errors.js"
import {
  clearCommandTypes,
  decodeOk,
  emptyClearedTypes,
  expectOp,
  invalidAt,
  put,
  small,
  tooLargeAt
} from "./pointDecoderSupport.js"

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
    // The contract's table pins the six (contract/test/WidgetType.test.ts); decoding must agree with it.
    assert.deepStrictEqual(clearCommandTypes, [...contractClearCommandTypes])
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
