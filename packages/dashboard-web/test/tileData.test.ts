import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { foldAntimeridian } from "../src/browser/views/antimeridian.js"
import type { Entry } from "../src/Model.js"
import { addEntry, decodeEvent, mergeEntries, onScreenOrder, snapshotEntries } from "../src/browser/TileData.js"
import { formatAge, formatCompact, formatValue, niceRange, safeImageUrl, tileTitle } from "../src/browser/format.js"
import { heldEntries, widgetTypes } from "../src/index.js"
import { widgetTypes as coreWidgetTypes } from "@dashstream/core"

describe("held entries (docs/api.md section 11)", () => {
  it("an entry with a held ts replaces it; others are inserted in ts order", () => {
    let held = snapshotEntries(
      [
        { ts: 1, point: "a" },
        { ts: 3, point: "c" }
      ],
      10
    )
    held = addEntry(held, { ts: 2, point: "b" }, 10)
    held = addEntry(held, { ts: 3, point: "C" }, 10)
    assert.deepStrictEqual(held, [
      { ts: 1, point: "a" },
      { ts: 2, point: "b" },
      { ts: 3, point: "C" }
    ])
  })
  it("mergeEntries joins two ascending runs in one pass as adding each entry of the later one would", () => {
    const run = fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 40 }).map((ts) => ts.sort((a, b) => a - b))
    fc.assert(
      fc.property(run, run, (a, b) => {
        const earlier = a.map((ts) => ({ ts, point: `e${ts}` }))
        const later = b.map((ts) => ({ ts, point: `l${ts}` }))
        const oneByOne = later.reduce<ReadonlyArray<Entry>>(
          (held, e) => addEntry(held, e, Number.POSITIVE_INFINITY),
          earlier
        )
        assert.deepStrictEqual(mergeEntries(earlier, later), oneByOne)
      })
    )
    const held = [{ ts: 1, point: 1 }]
    assert.strictEqual(mergeEntries(held, []), held)
  })
  it("state tiles keep only the latest; series keep the latest N", () => {
    assert.deepStrictEqual(addEntry([{ ts: 1, point: "a" }], { ts: 2, point: "b" }, 1), [{ ts: 2, point: "b" }])
    assert.strictEqual(heldEntries("table"), 1)
    assert.strictEqual(heldEntries("number"), 2)
    assert.strictEqual(heldEntries("line-graph"), 1000)
  })
  it("always ascending, unique ts, at most keep, the latest ts kept (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 50 })), fc.integer({ min: 1, max: 20 }), (tss, keep) => {
        const held = tss.reduce<ReadonlyArray<{ ts: number; point: unknown }>>(
          (h, ts) => addEntry(h, { ts, point: ts }, keep),
          []
        )
        for (let i = 1; i < held.length; i++) assert.isTrue(held[i - 1]!.ts < held[i]!.ts)
        assert.isAtMost(held.length, keep)
        if (tss.length > 0) assert.strictEqual(held[held.length - 1]!.ts, Math.max(...tss))
        assert.strictEqual(held.length, Math.min(keep, new Set(tss).size))
      })
    )
  })
  it("a snapshot's deleted member names the tiles whose widget is gone (absent, none is); now is the server's time", () => {
    const snapshot = decodeEvent("snapshot", '{"tiles":{"a":[{"ts":1,"point":2}]},"deleted":["b",3]}')
    assert.deepStrictEqual(snapshot, {
      kind: "snapshot",
      tiles: new Map([["a", [{ ts: 1, point: 2 }]]]),
      deleted: new Set(["b"])
    })
    assert.deepStrictEqual(decodeEvent("snapshot", '{"tiles":{},"deleted":[],"now":1700000000.25}'), {
      kind: "snapshot",
      tiles: new Map<string, ReadonlyArray<{ ts: number; point: unknown }>>(),
      deleted: new Set<string>(),
      now: 1700000000.25
    })
    assert.deepStrictEqual(decodeEvent("snapshot", '{"tiles":{}}'), {
      kind: "snapshot",
      tiles: new Map<string, ReadonlyArray<{ ts: number; point: unknown }>>(),
      deleted: new Set<string>()
    })
  })
  it("the firing alert rules: a snapshot's firing member, and event: alerts (docs/api.md section 11.5)", () => {
    assert.deepStrictEqual(decodeEvent("snapshot", '{"tiles":{},"deleted":[],"firing":{"a":["CPU hot","Disk"]}}'), {
      kind: "snapshot",
      tiles: new Map<string, ReadonlyArray<{ ts: number; point: unknown }>>(),
      deleted: new Set<string>(),
      firing: { a: ["CPU hot", "Disk"] }
    })
    assert.deepStrictEqual(decodeEvent("alerts", '{"firing":{}}'), { kind: "alerts", firing: {} })
  })
  it("a layout event's tiles: a tile with type null has no widget (shown as deleted); a malformed tile voids it", () => {
    const data = {
      name: "wall",
      tiles: [
        {
          streamName: "a",
          title: "A",
          x: 0,
          y: 0,
          w: 6,
          h: 1,
          options: { thresholds: [{ above: 1, color: "red" }], staleAfter: 60 },
          type: "number"
        },
        { streamName: "b", x: 6, y: 0, w: 6, h: 2, type: null }
      ]
    }
    assert.deepStrictEqual(decodeEvent("layout", JSON.stringify(data)), {
      kind: "layout",
      name: "wall",
      tiles: [
        {
          streamName: "a",
          title: "A",
          type: "number",
          x: 0,
          y: 0,
          w: 6,
          h: 1,
          deleted: false,
          options: { thresholds: [{ above: 1, color: "red" }], staleAfter: 60 }
        },
        { streamName: "b", type: "label", x: 6, y: 0, w: 6, h: 2, deleted: true }
      ]
    })
    for (const bad of [{ type: "nope" }, { w: 0 }, { x: -1 }, { title: 3 }, { streamName: 1 }]) {
      const tiles = [{ ...data.tiles[0], ...bad }]
      assert.strictEqual(decodeEvent("layout", JSON.stringify({ name: "w", tiles })), undefined, JSON.stringify(bad))
    }
    assert.strictEqual(decodeEvent("layout", '{"tiles":[]}'), undefined)
  })
  it("ignores malformed data", () => {
    assert.strictEqual(decodeEvent("entry", "not json"), undefined)
    assert.strictEqual(decodeEvent("entry", '{"streamName":"a","point":3}'), undefined)
    assert.strictEqual(decodeEvent("clear", "{}"), undefined)
    assert.strictEqual(decodeEvent("other", '{"streamName":"a"}'), undefined)
  })
})

describe("format", () => {
  it("ages as a wall screen says them (the stale text of docs/api.md section 15)", () => {
    for (const [seconds, text] of [
      [0, "0 s"],
      [59.9, "59 s"],
      [60, "1 min"],
      [12 * 60 + 59, "12 min"],
      [3600, "1 h"],
      [3 * 3600 + 5 * 60, "3 h 5 min"],
      [47 * 3600, "47 h"],
      [49 * 3600, "2 days"],
      [-5, "0 s"]
    ] as const) {
      assert.strictEqual(formatAge(seconds), text, String(seconds))
    }
    assert.strictEqual(formatCompact(1234567), "1.2M")
    assert.strictEqual(formatCompact(2500), "2.5K")
    assert.strictEqual(formatCompact(40), "40")
  })
  it("values, nice ranges, image URLs", () => {
    assert.strictEqual(formatValue(1234.567, "$", " USD"), "$1,234.57 USD")
    assert.deepStrictEqual(niceRange([42]), { min: 0, max: 50 })
    assert.deepStrictEqual(niceRange([7300]), { min: 0, max: 10000 })
    assert.deepStrictEqual(niceRange([-0.3]), { min: -0.5, max: 0 })
    assert.strictEqual(safeImageUrl("https://a.example/x.png"), "https://a.example/x.png")
    for (const bad of ["javascript:alert(1)", "data:image/png;base64,AA", "/relative.png", 42]) {
      assert.strictEqual(safeImageUrl(bad), undefined)
    }
  })
})

describe("tile titles and order", () => {
  it("a title as written; a line-protocol stream name reads as its measurement.field and tag values", () => {
    assert.strictEqual(tileTitle("revenue", "Revenue today"), "Revenue today")
    assert.strictEqual(tileTitle("revenue"), "revenue")
    assert.strictEqual(tileTitle("cpu.usage_idle{cpu=cpu-total,host=web1}"), "cpu.usage_idle (cpu-total, web1)")
    assert.strictEqual(tileTitle("cpu.usage_idle{cpu=cpu-total,host=web1}", "CPU idle"), "CPU idle")
    // A tag value holding a comma or an equals sign (escapes are removed from stream names).
    assert.strictEqual(tileTitle("m.f{a=x,y,b=p=q}"), "m.f (x,y, p=q)")
    for (const plain of ["{a=b}", "m.f{}", "m.f{novalue}", "m.f{a=b}x", "set {a=b"]) {
      assert.strictEqual(tileTitle(plain), plain)
    }
  })
  it("tiles in on-screen order: by row, then column", () => {
    const tiles = [
      { x: 8, y: 2 },
      { x: 4, y: 0 },
      { x: 0, y: 2 },
      { x: 0, y: 0 }
    ]
    assert.deepStrictEqual(onScreenOrder(tiles), [
      { x: 0, y: 0 },
      { x: 4, y: 0 },
      { x: 0, y: 2 },
      { x: 8, y: 2 }
    ])
    assert.deepStrictEqual(tiles[0], { x: 8, y: 2 }, "the input is left as it was")
  })
})

describe("antimeridian folding", () => {
  it("folds a ring crossing 180 onto its main side, leaves others", () => {
    const fiji = [
      [178, -17],
      [-179.8, -16.5],
      [179, -16],
      [178, -17]
    ]
    assert.deepStrictEqual(foldAntimeridian(fiji), [
      [178, -17],
      [180, -16.5],
      [179, -16],
      [178, -17]
    ])
    const plain = [
      [1, 1],
      [2, 2],
      [1, 1]
    ]
    assert.strictEqual(foldAntimeridian(plain), plain)
  })
})

describe("widget types", () => {
  it("are the 20 of core, in the same order", () => {
    assert.deepStrictEqual([...widgetTypes], [...coreWidgetTypes])
  })
})
