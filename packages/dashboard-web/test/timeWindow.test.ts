import { assert, describe, it } from "@effect/vitest"
import { widgetTypes } from "../src/WidgetType.js"
import {
  boundsAt,
  dropBefore,
  formatSpan,
  isLive,
  numberHeadEntries,
  pageWindow,
  rangePathOf,
  rangePresets,
  rangeQuery,
  sameWindow,
  showsTime,
  tileWindow,
  within,
  withPageWindow
} from "../src/browser/timeWindow.js"
import { view as lineGraph } from "../src/browser/views/lineGraph.js"
import { view as number } from "../src/browser/views/number.js"
import { view as sparkline } from "../src/browser/views/sparkline.js"

const T = 1_700_000_000
const entry = (ts: number, n: number) => ({ ts, point: { number: n } })

describe("the page's window of time from its address (docs/api.md section 11.6)", () => {
  it("reads every preset of ?range=, and ?from=&to= in seconds; from alone grows live", () => {
    for (const [preset, seconds] of Object.entries(rangePresets)) {
      assert.deepStrictEqual(pageWindow(`?range=${preset}`), { kind: "last", seconds, preset } as never)
    }
    assert.deepStrictEqual(
      Object.keys(rangePresets).map((p) => rangePresets[p as keyof typeof rangePresets]),
      [3_600, 21_600, 86_400, 604_800, 2_592_000, 7_776_000, 31_536_000]
    )
    assert.deepStrictEqual(pageWindow(`?from=${T}&to=${T + 60.5}`), { kind: "between", from: T, to: T + 60.5 })
    assert.deepStrictEqual(pageWindow(`?theme=light&from=${T}`), { kind: "between", from: T })
    // from/to win over range when both are given.
    assert.deepStrictEqual(pageWindow(`?range=7d&from=${T}&to=${T + 1}`), { kind: "between", from: T, to: T + 1 })
  })

  it("ignores any other value, as if absent", () => {
    for (const search of [
      "",
      "?theme=dark",
      "?range=2h",
      "?range=7D",
      "?range=",
      "?range=604800",
      `?to=${T}`,
      "?from=abc",
      "?from=-5",
      "?from=1e9",
      "?from=Infinity",
      `?from=${T + 10}&to=${T}`,
      `?from=${T}&to=soon`
    ]) {
      assert.strictEqual(pageWindow(search), undefined, search)
    }
    // A broken from/to falls back to a valid range.
    assert.deepStrictEqual(pageWindow(`?range=1h&from=x`), { kind: "last", seconds: 3_600, preset: "1h" })
  })

  it("writes a window back into the address, keeping every other parameter; Live takes range, from and to out", () => {
    const search = `?theme=light&range=24h&from=${T}&to=${T + 5}`
    assert.strictEqual(withPageWindow(search, undefined), "?theme=light")
    assert.strictEqual(withPageWindow("?range=1h", undefined), "")
    assert.strictEqual(
      withPageWindow(search, { kind: "last", seconds: 604_800, preset: "7d" }),
      "?theme=light&range=7d"
    )
    assert.strictEqual(withPageWindow("", { kind: "last", seconds: 86_400 }), "?range=24h")
    assert.strictEqual(
      withPageWindow("?theme=dark", { kind: "between", from: T + 0.1234, to: T + 3600 }),
      `?theme=dark&from=${T}.123&to=${T + 3600}`
    )
    assert.strictEqual(withPageWindow("", { kind: "between", from: T }), `?from=${T}`)
    // What it writes reads back as the same window.
    for (const w of [
      { kind: "last", seconds: 21_600, preset: "6h" },
      { kind: "between", from: T, to: T + 99.5 },
      { kind: "between", from: T }
    ] as const) {
      assert.isTrue(sameWindow(pageWindow(withPageWindow("?theme=light", w)), w), JSON.stringify(w))
    }
  })
})

describe("which window a tile shows (docs/api.md section 15.1)", () => {
  it("number, sparkline and line-graph tiles show time; the page's window overrides their own range", () => {
    assert.deepStrictEqual(
      widgetTypes.filter((t) => showsTime(t)),
      ["number", "sparkline", "line-graph"]
    )
    const page = { kind: "last", seconds: 86_400, preset: "24h" } as const
    for (const type of widgetTypes) {
      if (showsTime(type)) {
        assert.deepStrictEqual(tileWindow(type, 604_800, undefined), { kind: "last", seconds: 604_800 })
        assert.strictEqual(tileWindow(type, undefined, undefined), undefined)
        assert.strictEqual(tileWindow(type, 604_800, page), page)
        assert.strictEqual(tileWindow(type, undefined, page), page)
      } else {
        assert.strictEqual(tileWindow(type, 604_800, page), undefined, type)
      }
    }
  })

  it("a last window slides with the clock, a from..to one stays, a from one grows", () => {
    assert.deepStrictEqual(boundsAt({ kind: "last", seconds: 3_600 }, T), { from: T - 3_600, to: T, span: 3_600 })
    assert.deepStrictEqual(boundsAt({ kind: "between", from: T - 50, to: T - 10 }, T + 1e6), {
      from: T - 50,
      to: T - 10,
      span: 40
    })
    assert.deepStrictEqual(boundsAt({ kind: "between", from: T - 50 }, T), { from: T - 50, to: T, span: 50 })
    assert.isTrue(isLive({ kind: "last", seconds: 60 }))
    assert.isTrue(isLive({ kind: "between", from: T }))
    assert.isFalse(isLive({ kind: "between", from: T, to: T + 1 }))
  })

  it("the range read: a chart asks for as many points as it is wide, a number tile for its window's first entries", () => {
    const week = { kind: "last", seconds: 604_800 } as const
    assert.strictEqual(rangeQuery("line-graph", 640.4, week, T), `from=${T - 604_800}&points=640`)
    assert.strictEqual(rangeQuery("sparkline", 0, week, T), `from=${T - 604_800}&points=2`)
    assert.strictEqual(rangeQuery("sparkline", 50_000, week, T), `from=${T - 604_800}&points=10000`)
    assert.strictEqual(rangeQuery("number", 300, week, T), `from=${T - 604_800}&limit=${numberHeadEntries}`)
    const fixed = { kind: "between", from: T - 100, to: T - 0.5 } as const
    assert.strictEqual(rangeQuery("line-graph", 800, fixed, T), `from=${T - 100}&to=${T - 0.5}&points=800`)
    assert.strictEqual(rangeQuery("number", 300, fixed, T), `from=${T - 100}&to=${T - 0.5}&points=2`)
  })

  it("reads through the page's own view token, under any base path", () => {
    assert.strictEqual(rangePathOf("/d/dv_abc"), "/d/dv_abc/range")
    assert.strictEqual(rangePathOf("/dash/r/dv_abc/"), "/dash/r/dv_abc/range")
  })

  it("entries older than the window leave it; within keeps both bounds", () => {
    const entries = [entry(T, 1), entry(T + 10, 2), entry(T + 20, 3)]
    assert.strictEqual(dropBefore(entries, T - 1), entries)
    assert.deepStrictEqual(dropBefore(entries, T + 10), entries.slice(1))
    assert.deepStrictEqual(dropBefore(entries, T + 21), [])
    assert.deepStrictEqual(within(entries, T + 10, T + 20), entries.slice(1))
  })

  it("writes spans as a tile says them", () => {
    const cases: ReadonlyArray<[number, string]> = [
      [45, "45 s"],
      [60, "1 min"],
      [1_800, "30 min"],
      [3_600, "1 h"],
      [21_600, "6 h"],
      [86_400, "24 h"],
      [129_600, "36 h"],
      [172_800, "2 d"],
      [216_000, "2.5 d"],
      [604_800, "7 d"],
      [31_536_000, "365 d"]
    ]
    for (const [span, text] of cases) assert.strictEqual(formatSpan(span), text, String(span))
  })
})

describe("views over a window of time", () => {
  const week = { from: T - 604_800, to: T, span: 604_800 }

  it("number: the change since the window's first entry, with the span; the value is the latest", () => {
    const entries = [entry(T - 700_000, 1), entry(T - 600_000, 100), entry(T - 3_600, 110), entry(T - 1, 125)]
    assert.deepStrictEqual(number(entries, {}, week), {
      value: "125",
      change: { direction: "up", text: "\u25b2 +25 (+25%) in 7 d" }
    })
    // Without a window: since the previous entry.
    assert.strictEqual(number(entries)?.change?.text, "\u25b2 +15 (+13.64%)")
    const down = [entry(T - 86_000, 8), entry(T - 10, 6)]
    assert.strictEqual(
      number(down, {}, { from: T - 86_400, to: T, span: 86_400 })?.change?.text,
      "\u25bc \u22122 (\u221225%) in 24 h"
    )
  })

  it("number: fewer than two entries within the window, no change", () => {
    assert.deepStrictEqual(number([entry(T - 700_000, 1), entry(T - 5, 7)], {}, week), { value: "7" })
    assert.deepStrictEqual(number([entry(T - 700_000, 1)], {}, week), { value: "1" })
    assert.deepStrictEqual(number([entry(T - 5, 0), entry(T - 1, 3)], {}, week)?.change, {
      direction: "up",
      text: "\u25b2 +3 in 7 d"
    })
  })

  it("sparkline and line graph: the time axis spans the window however few entries it holds", () => {
    const entries = [entry(T - 10, 1), entry(T - 5, 2)]
    for (const v of [sparkline, lineGraph]) {
      const axis = (v(entries, {}, week)!.option as { xAxis: Record<string, unknown> }).xAxis
      assert.strictEqual(axis["min"], (T - 604_800) * 1000)
      assert.strictEqual(axis["max"], T * 1000)
      const live = (v(entries)!.option as { xAxis: Record<string, unknown> }).xAxis
      assert.isFalse("min" in live || "max" in live)
    }
  })
})
