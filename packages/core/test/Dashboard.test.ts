import { assert, describe, it } from "@effect/vitest"
import { Either, FastCheck as fc, ParseResult, Schema } from "effect"
import {
  CreateDashboardBody,
  checkStreams,
  decodeLayout,
  defaultLayout,
  GRID_COLUMNS,
  MAX_TILES,
  overlaps,
  type Tile,
  Tiles
} from "../src/Dashboard.js"
import { StreamName } from "../src/StreamName.js"
import {
  rangeTypes,
  scaleTypes,
  thresholdBands,
  thresholdColor,
  thresholdColors,
  thresholdTypes
} from "../src/TileStatus.js"
import { digestViewToken, newViewToken, viewPath, viewUrl } from "../src/ViewToken.js"
import { type WidgetType, widgetTypes } from "../src/WidgetType.js"

const tile = (x: number, y: number, w: number, h: number, streamName = "s"): Record<string, unknown> => ({
  streamName,
  x,
  y,
  w,
  h
})

/** The first issue of decoding `tiles`, as `[path, message]` (path as the API reports it), or "ok". */
const firstIssue = (tiles: unknown): [string | undefined, string] | "ok" => {
  const decoded = decodeLayout(tiles)
  return Either.isRight(decoded) ? "ok" : [decoded.left.path, decoded.left.message]
}

describe("Tile and Tiles: the grid rules of docs/api.md section 11", () => {
  it("accepts tiles on the 12-column grid, with or without title, touching but not overlapping", () => {
    assert.strictEqual(firstIssue([tile(0, 0, 12, 1), tile(0, 1, 6, 2), tile(6, 1, 6, 2)]), "ok")
    assert.strictEqual(firstIssue([{ ...tile(11, 999, 1, 1), title: "" }]), "ok")
    assert.strictEqual(firstIssue([]), "ok")
  })

  it("rejects each rule with the path of the field that breaks it", () => {
    const cases: ReadonlyArray<[unknown, string, RegExp]> = [
      [[tile(0, 0, 2, 2), tile(-1, 0, 1, 1)], "tiles[1].x", /x must be from 0 to 11/],
      [[tile(12, 0, 1, 1)], "tiles[0].x", /x must be from 0 to 11/],
      [[tile(1.5, 0, 1, 1)], "tiles[0].x", /x must be a whole number/],
      [[tile(0, -1, 1, 1)], "tiles[0].y", /y must be from 0/],
      [[tile(0, 0, 0, 1)], "tiles[0].w", /w must be from 1 to 12/],
      [[tile(0, 0, 1, 0)], "tiles[0].h", /h must be from 1/],
      [[tile(0, 0, 1, 2.5)], "tiles[0].h", /h must be a whole number/],
      [[tile(8, 0, 5, 1)], "tiles[0].w", /off the grid: x \+ w must be at most 12/],
      [[tile(0, 999, 1, 2)], "tiles[0].h", /off the grid: y \+ h must be at most 1000/],
      [[tile(0, 0, 4, 2), tile(4, 0, 4, 2), tile(3, 1, 2, 1)], "tiles[2]", /overlaps tiles\[0\]/],
      [[tile(0, 0, 1, 1, "")], "tiles[0].streamName", /must not be empty/],
      [[tile(0, 0, 1, 1, "a/b")], "tiles[0].streamName", /'\/'/],
      [[{ ...tile(0, 0, 1, 1), title: "t".repeat(201) }], "tiles[0].title", /at most 200/],
      [[{ x: 0, y: 0, w: 1, h: 1 }], "tiles[0].streamName", /./],
      [[{ ...tile(0, 0, 1, 1), x: "0" }], "tiles[0].x", /number/],
      [Array.from({ length: MAX_TILES + 1 }, (_, i) => tile(0, i, 1, 1)), "tiles", /at most 100 tiles/]
    ]
    for (const [tiles, path, message] of cases) {
      const issue = firstIssue(tiles)
      assert.notStrictEqual(issue, "ok", JSON.stringify(tiles).slice(0, 100))
      const [gotPath, gotMessage] = issue as [string, string]
      assert.strictEqual(gotPath, path, gotMessage)
      assert.match(gotMessage, message)
    }
    assert.strictEqual(firstIssue(Array.from({ length: MAX_TILES }, (_, i) => tile(0, i, 1, 1))), "ok")
  })

  it("overlap is symmetric and exactly 'shares a cell' (checked against a cell grid)", () => {
    const arb = fc.record({
      x: fc.integer({ min: 0, max: 5 }),
      y: fc.integer({ min: 0, max: 5 }),
      w: fc.integer({ min: 1, max: 4 }),
      h: fc.integer({ min: 1, max: 4 })
    })
    fc.assert(
      fc.property(arb, arb, (a, b) => {
        const cells = (t: typeof a) => {
          const out = new Set<string>()
          for (let i = t.x; i < t.x + t.w; i++) for (let j = t.y; j < t.y + t.h; j++) out.add(`${i},${j}`)
          return out
        }
        const ca = cells(a)
        const shared = [...cells(b)].some((c) => ca.has(c))
        const [ta, tb] = [a, b].map((t) => ({ ...t, streamName: StreamName.make("s") }) as Tile)
        assert.strictEqual(overlaps(ta!, tb!), shared)
        assert.strictEqual(overlaps(tb!, ta!), shared)
      })
    )
  })

  it("a layout file holds the tiles array or {tiles: [...]}; anything else is refused", () => {
    const tiles = [tile(0, 0, 3, 2, "revenue")]
    assert.deepStrictEqual(decodeLayout(tiles), Either.right(tiles as unknown as ReadonlyArray<Tile>))
    assert.deepStrictEqual(decodeLayout({ name: "x", tiles }), Either.right(tiles as unknown as ReadonlyArray<Tile>))
    for (const bad of [{}, null, "tiles", { tiles: {} }, 3]) assert.isTrue(Either.isLeft(decodeLayout(bad)))
  })

  it("a layout nested too deeply or too wide is refused with a short message, not a stack overflow", () => {
    let deep: unknown = 1
    for (let i = 0; i < 100_000; i++) deep = [deep]
    const wide = Array.from({ length: 100_000 }, () => 1)
    for (const [layout, path] of [
      [[deep], "tiles[0]"],
      [[{ ...tile(0, 0, 1, 1), title: deep }], "tiles[0].title"],
      [[{ ...tile(0, 0, 1, 1), w: wide }], "tiles[0].w"]
    ] as const) {
      const issue = firstIssue(layout)
      assert.notStrictEqual(issue, "ok")
      const [at, message] = issue as [string, string]
      assert.strictEqual(at, path)
      assert.isBelow(message.length, 300, message)
    }
  })

  it("the API body: name 1..200 characters, tiles optional", () => {
    const decode = Schema.decodeUnknownEither(CreateDashboardBody)
    assert.isTrue(Either.isRight(decode({ name: "Wall" })))
    for (const name of ["", "n".repeat(201), 5, undefined]) {
      const result = decode({ name })
      assert.isTrue(Either.isLeft(result), String(name))
      const issue = ParseResult.ArrayFormatter.formatErrorSync(
        (result as Either.Left<ParseResult.ParseError, never>).left
      )
      assert.deepStrictEqual(issue[0]!.path, ["name"])
    }
  })

  it("checkStreams names the first tile whose stream is not a widget of the account", () => {
    const tiles = Either.getOrThrow(decodeLayout([tile(0, 0, 1, 1, "a"), tile(1, 0, 1, 1, "b"), tile(2, 0, 1, 1, "c")]))
    const widgets = (names: ReadonlyArray<string>) => new Map(names.map((n) => [n, "number" as WidgetType]))
    assert.isTrue(Either.isRight(checkStreams(tiles, widgets(["a", "b", "c"]))))
    const missing = checkStreams(tiles, widgets(["a", "c"]))
    assert.isTrue(Either.isLeft(missing))
    const error = (missing as Either.Left<any, void>).left
    assert.strictEqual(error._tag, "InvalidRequest")
    assert.strictEqual(error.path, "tiles[1].streamName")
    assert.match(error.message, /"b"/)
  })
})

describe("tile options: docs/api.md section 15", () => {
  const withOptions = (options: unknown) => [tile(0, 0, 1, 1, "a"), { ...tile(1, 0, 1, 1, "b"), options }]

  it("accepts thresholds, min/max and staleAfter at their bounds, and keeps them as given", () => {
    const options = {
      thresholds: [
        { above: 80, color: "amber" },
        { above: 95.5, color: "red" },
        { below: -1e9, color: "blue" }
      ],
      min: -10,
      max: 120,
      staleAfter: 10
    }
    const decoded = decodeLayout(withOptions(options))
    assert.deepStrictEqual(Either.getOrThrow(decoded)[1]!.options, options as unknown)
    for (const ok of [
      {},
      { staleAfter: 31_536_000 },
      { min: 0 },
      { max: 0 },
      { thresholds: [] },
      { range: 60 },
      { range: 604_800 },
      { range: 31_536_000 }
    ]) {
      assert.strictEqual(firstIssue(withOptions(ok)), "ok", JSON.stringify(ok))
    }
    for (const color of thresholdColors) {
      assert.strictEqual(firstIssue(withOptions({ thresholds: [{ below: 0, color }] })), "ok", color)
    }
  })

  it("refuses each broken option with the path of the field that breaks it", () => {
    const cases: ReadonlyArray<[unknown, string, RegExp]> = [
      [
        {
          thresholds: [
            { above: 1, color: "green" },
            { above: 2, color: "pink" }
          ]
        },
        "thresholds[1].color",
        /one of green, amber, red, blue, grey/
      ],
      [{ thresholds: [{ above: 1, below: 2, color: "red" }] }, "thresholds[0]", /exactly one of above and below/],
      [{ thresholds: [{ color: "red" }] }, "thresholds[0]", /exactly one of above and below/],
      [{ thresholds: [{ above: 1 }] }, "thresholds[0].color", /missing/],
      [{ thresholds: [{ above: "1", color: "red" }] }, "thresholds[0].above", /above must be a number/],
      [{ thresholds: [{ below: 1, color: "red", label: "x" }] }, "thresholds[0].label", /unexpected/],
      [{ thresholds: [7] }, "thresholds[0]", /object/],
      [{ thresholds: { above: 1, color: "red" } }, "thresholds", /array/],
      [{ thresholds: Array.from({ length: 21 }, () => ({ above: 1, color: "red" })) }, "thresholds", /at most 20/],
      [{ min: 5, max: 5 }, "max", /greater than min/],
      [{ min: 6, max: 5 }, "max", /greater than min/],
      [{ min: "0" }, "min", /min must be a number/],
      [{ max: null }, "max", /max must be a number/],
      [{ staleAfter: 9 }, "staleAfter", /from 10 to 31536000/],
      [{ staleAfter: 31_536_001 }, "staleAfter", /from 10 to 31536000/],
      [{ staleAfter: 10.5 }, "staleAfter", /whole number/],
      [{ staleAfter: "60" }, "staleAfter", /number of seconds/],
      [{ range: 59 }, "range", /range must be from 60 to 31536000 seconds/],
      [{ range: 31_536_001 }, "range", /from 60 to 31536000/],
      [{ range: 3600.5 }, "range", /range must be a whole number of seconds/],
      [{ range: "3600" }, "range", /range must be a number of seconds/],
      [{ range: null }, "range", /range must be a number of seconds/],
      [{ range: "7d" }, "range", /range must be a number of seconds/],
      [{ colour: "red" }, "colour", /unexpected/],
      [{ staleafter: 60 }, "staleafter", /unexpected/]
    ]
    for (const [options, path, message] of cases) {
      const issue = firstIssue(withOptions(options))
      assert.notStrictEqual(issue, "ok", JSON.stringify(options))
      const [gotPath, gotMessage] = issue as [string, string]
      assert.strictEqual(gotPath, `tiles[1].options.${path}`, gotMessage)
      assert.match(gotMessage, message)
    }
    for (const options of [5, null, "x", [1]]) {
      assert.deepStrictEqual(firstIssue(withOptions(options)), ["tiles[1].options", "options must be an object"])
    }
  })

  it("checkStreams refuses options the tile's widget type does not take, at the option's path", () => {
    const check = (type: WidgetType, options: object) => {
      const tiles = Either.getOrThrow(decodeLayout(withOptions(options)))
      const result = checkStreams(
        tiles,
        new Map<string, WidgetType>([
          ["a", "label"],
          ["b", type]
        ])
      )
      return Either.isRight(result) ? "ok" : [result.left.path, result.left.message]
    }
    for (const type of widgetTypes) {
      const thresholds = check(type, { thresholds: [{ above: 1, color: "red" }] })
      const scale = check(type, { min: 0, max: 10 })
      const onlyMax = check(type, { max: 10 })
      const range = check(type, { range: 86_400 })
      assert.strictEqual(check(type, { staleAfter: 60 }), "ok", type)
      if (rangeTypes.includes(type)) assert.strictEqual(range, "ok", type)
      else
        assert.deepStrictEqual(range, [
          "tiles[1].options.range",
          `range is not an option of ${type} tiles (only of number, sparkline, line-graph)`
        ])
      if (thresholdTypes.includes(type)) assert.strictEqual(thresholds, "ok", type)
      else
        assert.deepStrictEqual(thresholds, [
          "tiles[1].options.thresholds",
          `thresholds is not an option of ${type} tiles (only of number, horizontal-bar, vertical-bar, dial, sparkline, line-graph)`
        ])
      if (scaleTypes.includes(type)) {
        assert.strictEqual(scale, "ok", type)
        assert.strictEqual(onlyMax, "ok", type)
      } else {
        assert.strictEqual((scale as [string])[0], "tiles[1].options.min", type)
        assert.strictEqual((onlyMax as [string])[0], "tiles[1].options.max", type)
      }
    }
    assert.deepStrictEqual(
      ["number", "horizontal-bar", "vertical-bar", "dial", "sparkline", "line-graph"].filter(
        (t) => !widgetTypes.includes(t as WidgetType)
      ),
      []
    )
  })
})

describe("thresholdColor: the status colour of a value (docs/api.md section 15)", () => {
  const threshold = fc
    .record({
      side: fc.constantFrom("above" as const, "below" as const),
      n: fc.double({ noNaN: true, noDefaultInfinity: true, min: -1000, max: 1000 }),
      color: fc.constantFrom(...thresholdColors)
    })
    .map(({ side, n, color }) => (side === "above" ? { above: n, color } : { below: n, color }))
  const value = fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -1100, max: 1100 }),
    fc.integer({ min: -1000, max: 1000 })
  )

  it("is the colour of the last threshold the value meets (greater than above, less than below), else none", () => {
    fc.assert(
      fc.property(fc.array(threshold, { maxLength: 8 }), value, (thresholds, v) => {
        // Independent statement of the rule: walk the list in order, remember every threshold met.
        let expected: string | undefined
        for (const t of thresholds) {
          if (("above" in t && v > t.above!) || ("below" in t && v < t.below!)) expected = t.color
        }
        assert.strictEqual(thresholdColor(v, thresholds), expected)
      }),
      { numRuns: 2000 }
    )
  })

  it("a value on a threshold's number does not meet it; examples", () => {
    const ts = [
      { above: 80, color: "amber" },
      { above: 95, color: "red" },
      { below: 10, color: "blue" }
    ] as const
    assert.strictEqual(thresholdColor(80, ts), undefined)
    assert.strictEqual(thresholdColor(80.01, ts), "amber")
    assert.strictEqual(thresholdColor(96, ts), "red")
    assert.strictEqual(thresholdColor(5, ts), "blue")
    assert.strictEqual(thresholdColor(50, ts), undefined)
    assert.strictEqual(thresholdColor(50, undefined), undefined)
    // The last one met wins even when an earlier one is "stronger".
    assert.strictEqual(
      thresholdColor(99, [
        { above: 90, color: "red" },
        { above: 0, color: "green" }
      ]),
      "green"
    )
  })

  it("bands: each stretch of the scale in the colour a value there takes", () => {
    fc.assert(
      fc.property(fc.array(threshold, { maxLength: 6 }), value, (thresholds, v) => {
        const bands = thresholdBands(thresholds, -1000, 1000)
        const band = bands.find((b) => v > b.from && v < b.to)
        const onEdge =
          bands.some((b) => v === b.from || v === b.to) || thresholds.some((t) => t.above === v || t.below === v)
        if (v > -1000 && v < 1000 && !onEdge) assert.strictEqual(band?.color, thresholdColor(v, thresholds))
        for (let i = 1; i < bands.length; i++) assert.isAtMost(bands[i - 1]!.to, bands[i]!.from)
      }),
      { numRuns: 1000 }
    )
    assert.deepStrictEqual(
      thresholdBands(
        [
          { above: 80, color: "amber" },
          { above: 95, color: "red" }
        ],
        0,
        100
      ),
      [
        { from: 80, to: 95, color: "amber" },
        { from: 95, to: 100, color: "red" }
      ]
    )
  })
})

describe("defaultLayout", () => {
  const widgetsOf = (types: ReadonlyArray<WidgetType>) =>
    types.map((type, i) => ({ streamName: StreamName.make(`w${i}`), type }))
  const rows = (tiles: ReadonlyArray<Tile>) => Math.max(0, ...tiles.map((t) => t.y + t.h))

  it("is valid for every count and mix of types: one tile per widget in order, no gap, no overlap", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...widgetTypes), { maxLength: MAX_TILES }), (types) => {
        const widgets = widgetsOf(types)
        const tiles = defaultLayout(widgets)
        assert.isTrue(Either.isRight(Schema.decodeUnknownEither(Tiles)(tiles)), JSON.stringify(tiles))
        assert.deepStrictEqual(
          tiles.map((t) => t.streamName),
          widgets.map((w) => w.streamName)
        )
        // No gap: the tiles cover every cell of the rows they use.
        const area = tiles.reduce((sum, t) => sum + t.w * t.h, 0)
        assert.strictEqual(area, GRID_COLUMNS * rows(tiles))
        // Reading order: by row, then column.
        for (let i = 1; i < tiles.length; i++) {
          const [a, b] = [tiles[i - 1]!, tiles[i]!]
          assert.isTrue(b.y > a.y || (b.y === a.y && b.x > a.x))
        }
      }),
      { numRuns: 200 }
    )
  })

  it("a typical 20-widget account (every type once) fits one 1920x1080 screen in 8 rows", () => {
    const tiles = defaultLayout(widgetsOf(widgetTypes))
    assert.strictEqual(tiles.length, 20)
    assert.strictEqual(rows(tiles), 8)
    // Tiles stay readable: at least 2 columns wide, about 300x270 px at least on 1920x1080.
    for (const t of tiles) assert.isAtLeast(t.w, 2)
  })

  it("numbers are narrower than maps in the same band; few widgets get big tiles (3: two bands, 2 + 1)", () => {
    const tiles = defaultLayout(widgetsOf(["number", "world-map", "leaderboard"]))
    assert.deepStrictEqual(
      tiles.map((t) => [t.x, t.y, t.w, t.h]),
      [
        [0, 0, 4, 2],
        [4, 0, 8, 2],
        [0, 2, 12, 2]
      ]
    )
    assert.deepStrictEqual(
      defaultLayout(widgetsOf(["table"])).map((t) => [t.x, t.y, t.w, t.h]),
      [[0, 0, 12, 2]]
    )
    assert.deepStrictEqual(defaultLayout([]), [])
    // Six widgets: two bands of three (tiles near 3:2 on 16:9), not one band of six tall slivers.
    assert.strictEqual(rows(defaultLayout(widgetsOf(Array(6).fill("number")))), 4)
  })
})

describe("view tokens", () => {
  it("dv_ and 256 random bits as base64url; digests are SHA-256 hex; the page path is /d/<token>", () => {
    const tokens = Array.from({ length: 100 }, newViewToken)
    for (const token of tokens) assert.match(token, /^dv_[A-Za-z0-9_-]{43}$/)
    assert.strictEqual(new Set(tokens).size, tokens.length)
    // The SHA-256 test vector of "abc" (FIPS 180-2).
    assert.strictEqual(digestViewToken("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    assert.match(digestViewToken(tokens[0]!), /^[0-9a-f]{64}$/)
    assert.notStrictEqual(digestViewToken(tokens[0]!), digestViewToken(tokens[1]!))
    assert.strictEqual(viewPath("dv_abc"), "/d/dv_abc")
    // Every view URL carries the base path (docs/api.md section 16): dashboards at /d/, rotations at /r/.
    assert.strictEqual(viewUrl("", "dashboard", "dv_abc"), "/d/dv_abc")
    assert.strictEqual(viewUrl("/dashboards", "dashboard", "dv_abc"), "/dashboards/d/dv_abc")
    assert.strictEqual(viewUrl("/tools/dash", "rotation", "rv_x-y"), "/tools/dash/r/rv_x-y")
    assert.strictEqual(viewUrl("", "dashboard", "a/b"), "/d/a%2Fb")
  })
})
