import { assert, describe, it } from "@effect/vitest"
import { view as barChart } from "../src/browser/views/barChart.js"
import { fitDial, view as dial } from "../src/browser/views/dial.js"
import { chartFontSize, fitAxes, fitPie, statusColors } from "../src/browser/views/options.js"
import { view as gallery } from "../src/browser/views/gallery.js"
import { barGaugeView } from "../src/browser/views/gauge.js"
import { srcdoc, view as html } from "../src/browser/views/html.js"
import { view as image } from "../src/browser/views/image.js"
import { view as label } from "../src/browser/views/label.js"
import { view as leaderboard } from "../src/browser/views/leaderboard.js"
import { view as lineGraph } from "../src/browser/views/lineGraph.js"
import { view as list } from "../src/browser/views/list.js"
import { view as multiBar } from "../src/browser/views/multiBarGraph.js"
import { view as number } from "../src/browser/views/number.js"
import { view as pie } from "../src/browser/views/pieChart.js"
import { view as sparkline } from "../src/browser/views/sparkline.js"
import { view as table } from "../src/browser/views/table.js"
import { maxFeedItems, view as textFeed } from "../src/browser/views/textFeed.js"
import { usaInset } from "../src/browser/views/usaInset.js"
import { view as usaMap } from "../src/browser/views/usaMap.js"
import { view as worldMap } from "../src/browser/views/worldMap.js"
import { view as xy } from "../src/browser/views/xyGraph.js"
import { namedColors } from "../src/browser/format.js"

/** Entries with ascending `ts` from points. */
const at = (...points: ReadonlyArray<unknown>) => points.map((point, i) => ({ ts: 1_700_000_000 + i, point }))

// ECharts options are plain objects; tests read them through this loose view.
type Opt = { series: Array<Record<string, any>>; xAxis?: Record<string, any>; geo?: Record<string, any> }
const opt = (o: unknown): Opt => o as Opt

describe("every view shows the empty state for no entries", () => {
  const views = [number, barGaugeView, dial, sparkline, lineGraph, usaMap, worldMap, textFeed, leaderboard, pie]
  const more = [barChart, list, image, label, table, gallery, html, xy, multiBar]
  it("undefined for [] and for points that carry nothing to draw", () => {
    for (const v of [...views, ...more]) {
      assert.strictEqual(v([]), undefined)
      assert.strictEqual(v(at({ unrelated: true })), undefined)
    }
  })
})

describe("number", () => {
  it("shows the latest value with prefix/suffix and the change since the previous one", () => {
    const v = number(at({ number: 1200, prefix: "$" }, { number: 1284.5, prefix: "$" }))
    assert.deepStrictEqual(v, { value: "$1,284.5", change: { direction: "up", text: "\u25b2 +$84.5 (+7.04%)" } })
    const down = number(at({ number: 10, suffix: "%" }, { number: 7.5, suffix: "%" }))
    assert.strictEqual(down?.change?.direction, "down")
    assert.strictEqual(down?.change?.text, "\u25bc \u22122.5% (\u221225%)")
    const tiny = number(at({ number: 21_792.46, prefix: "$" }, { number: 21_793.53, prefix: "$" }))
    assert.strictEqual(tiny?.change?.text, "\u25b2 +$1.07 (+<0.01%)")
  })
  it("a single value has no change; a bare or string number is read as a number", () => {
    assert.deepStrictEqual(number(at(42)), { value: "42" })
    assert.deepStrictEqual(number(at("1234567.891")), { value: "1,234,567.89" })
  })
})

describe("bar gauges and dial", () => {
  it("scale from 0 to the next nice bound", () => {
    assert.deepStrictEqual(barGaugeView(at({ number: 72, suffix: "%" })), {
      value: "72%",
      fraction: 0.72,
      min: "0%",
      max: "100%",
      bands: []
    })
    assert.deepStrictEqual(barGaugeView(at(340)), {
      value: "340",
      fraction: 340 / 500,
      min: "0",
      max: "500",
      bands: []
    })
    assert.strictEqual(barGaugeView(at(-3))?.min, "-5")
    assert.strictEqual(barGaugeView(at(0))?.fraction, 0)
  })
  it("dial: one gauge series with the value and its text", () => {
    const o = opt(dial(at({ number: 63, suffix: "%" })))
    assert.strictEqual(o.series[0]!["type"], "gauge")
    assert.strictEqual(o.series[0]!["max"], 100)
    assert.deepStrictEqual(o.series[0]!["data"], [{ value: 63 }])
    assert.strictEqual(o.series[0]!["detail"].formatter(), "63%")
  })
})

describe("sparkline and line graph", () => {
  const entries = [
    { ts: 1_700_000_000, point: { number: 3 } },
    { ts: 1_700_000_060.5, point: { number: 7 } }
  ]
  it("ts seconds become milliseconds on a time axis", () => {
    const o = opt(lineGraph(entries)?.option)
    assert.strictEqual(o.xAxis?.["type"], "time")
    assert.deepStrictEqual(o.series[0]!["data"], [
      [1_700_000_000_000, 3],
      [1_700_000_060_500, 7]
    ])
  })
  it("sparkline shows the latest value", () => {
    const v = sparkline(entries)
    assert.strictEqual(v?.value, "7")
    assert.strictEqual(opt(v?.option).series[0]!["data"].length, 2)
  })
})

describe("tile options (docs/api.md section 15)", () => {
  const thresholds = [
    { above: 80, color: "amber" },
    { above: 95, color: "red" },
    { below: 10, color: "blue" }
  ] as const
  it("the value's status is the colour of the last threshold it meets, on every tile that shows a value", () => {
    for (const [n, status] of [
      [50, undefined],
      [81, "amber"],
      [96, "red"],
      [5, "blue"],
      [80, undefined]
    ] as const) {
      const points = at({ number: 1 }, { number: n })
      assert.strictEqual(number(points, { thresholds })?.status, status, `number ${n}`)
      assert.strictEqual(barGaugeView(points, { thresholds })?.status, status, `bar ${n}`)
      assert.strictEqual(sparkline(points, { thresholds })?.status, status, `sparkline ${n}`)
      assert.strictEqual(lineGraph(points, { thresholds })?.status, status, `line ${n}`)
      const detail = opt(dial(points, { thresholds })).series[0]!["detail"]
      assert.strictEqual(detail.color, status === undefined ? undefined : statusColors[status], `dial ${n}`)
    }
    assert.isFalse("status" in number(at(96))!)
  })
  it("min and max are the scale of bars and dials; bands are drawn on it", () => {
    const bar = barGaugeView(at(60), { min: 40, max: 140, thresholds })!
    assert.deepStrictEqual([bar.min, bar.max, bar.fraction], ["40", "140", 0.2])
    assert.deepStrictEqual(bar.bands, [
      { from: 0.4, to: 0.55, color: "amber" },
      { from: 0.55, to: 1, color: "red" }
    ])
    // Outside the scale, the bar is empty or full.
    assert.strictEqual(barGaugeView(at(20), { min: 40, max: 140 })!.fraction, 0)
    assert.strictEqual(barGaugeView(at(200), { min: 40, max: 140 })!.fraction, 1)
    // One bound given: the other is automatic, and always on the right side of it.
    assert.deepStrictEqual(
      [barGaugeView(at(60), { max: 80 })!.min, barGaugeView(at(60), { max: 80 })!.max],
      ["0", "80"]
    )
    assert.deepStrictEqual(
      [barGaugeView(at(60), { min: 100 })!.min, barGaugeView(at(60), { min: 100 })!.max],
      ["100", "200"]
    )
    assert.deepStrictEqual(
      [barGaugeView(at(-60), { max: -50 })!.min, barGaugeView(at(-60), { max: -50 })!.max],
      ["-100", "-50"]
    )
    const gauge = opt(dial(at(60), { min: 0, max: 200, thresholds })).series[0]!
    assert.deepStrictEqual([gauge["min"], gauge["max"]], [0, 200])
    // ECharts paints the arc up to each stop in its colour: blue below 10, the plain track, amber, red.
    assert.deepStrictEqual(gauge["axisLine"].lineStyle.color, [
      [0.05, statusColors.blue],
      [0.4, "rgba(141, 154, 176, 0.25)"],
      [0.475, statusColors.amber],
      [1, statusColors.red]
    ])
    assert.isFalse(gauge["progress"].show, "with bands the pointer marks the value")
  })
  it("a dial fitted to its chart keeps its labels apart and inside: fewer ticks, then none, as it shrinks", () => {
    const option = dial(at({ number: 63, suffix: "%" }))!
    const labelled = (w: number, h: number) => {
      const s = opt(fitDial(option, w, h)).series[0]!
      return s["axisLabel"].show ? s["splitNumber"] : 0
    }
    assert.strictEqual(labelled(1200, 600), 10)
    assert.strictEqual(labelled(100, 50), 0)
    assert.isAtMost(labelled(300, 150), labelled(1200, 600))
    for (const [w, h] of [
      [80, 40],
      [180, 45],
      [1200, 600]
    ] as const) {
      const s = opt(fitDial(option, w, h)).series[0]!
      // The arc's top and the value text's bottom stay inside the chart.
      assert.isAtLeast(s["center"][1] - s["radius"], 0)
      assert.isAtMost(s["center"][1] + s["detail"].offsetCenter[1] + s["detail"].fontSize / 2, h)
    }
  })
})

describe("maps", () => {
  it("one marker per point, in its colour, red by default", () => {
    const o = opt(
      worldMap(
        at(
          { latitude: 51.5, longitude: -0.12, title: "London" },
          { latitude: 35.7, longitude: 139.7, color: "blue" },
          { latitude: 1, longitude: 2, color: "magenta" },
          { latitude: 95, longitude: 0 }
        )
      )
    )
    const data = o.series[0]!["data"] as Array<{ name: string; value: [number, number]; itemStyle: { color: string } }>
    assert.deepStrictEqual(
      data.map((d) => [d.name, d.value, d.itemStyle.color]),
      [
        ["London", [-0.12, 51.5], namedColors.red],
        ["", [139.7, 35.7], namedColors.blue],
        ["", [2, 1], namedColors.red]
      ]
    )
    assert.strictEqual(o.geo?.["map"], "ds-world")
  })
  it("usa-map moves Alaska and Hawaii points into their insets, leaves the others", () => {
    const o = opt(usaMap(at({ latitude: 40.7, longitude: -74 }, { latitude: 61.2, longitude: -149.9 })))
    const [ny, anchorage] = o.series[0]!["data"] as Array<{ value: [number, number] }>
    assert.deepStrictEqual(ny!.value, [-74, 40.7])
    assert.deepStrictEqual(anchorage!.value, usaInset(-149.9, 61.2))
    assert.strictEqual(o.geo?.["map"], "ds-usa")
  })
  it("usaInset: the insets sit below the contiguous states, Aleutians east of 180 stay with Alaska", () => {
    const [lon, lat] = usaInset(-149.9, 61.2)
    assert.isTrue(lon > -125 && lon < -108 && lat < 28)
    const [hlon, hlat] = usaInset(-157.9, 21.3)
    assert.isTrue(hlon > -108 && hlon < -101 && hlat > 23 && hlat < 28)
    const [alon] = usaInset(173, 52.9)
    assert.isTrue(alon >= -124 && alon < -120)
    assert.deepStrictEqual(usaInset(-87.6, 41.9), [-87.6, 41.9])
  })
})

describe("text feed and gallery", () => {
  it("text feed: newest first, every field kept as text, only http(s) images", () => {
    const v = textFeed(
      at(
        { title: "a", msg: "first", imgUrl: "javascript:alert(1)" },
        { title: "<b>b</b>", msg: "second", imgUrl: "https://example.com/x.png", date: "10:47" }
      )
    )
    assert.deepStrictEqual(v, [
      { title: "<b>b</b>", msg: "second", imgUrl: "https://example.com/x.png", date: "10:47" },
      { title: "a", msg: "first" }
    ])
    const many = textFeed(at(...Array.from({ length: 40 }, (_, i) => ({ title: `t${i}`, msg: "" }))))
    assert.strictEqual(many?.length, maxFeedItems)
    assert.strictEqual(many?.[0]?.title, "t39")
  })
  it("gallery: the latest picture", () => {
    assert.deepStrictEqual(
      gallery(at({ title: "a", imgUrl: "http://x/a.png" }, { title: "Cat", imgUrl: "https://x/c.png" })),
      {
        title: "Cat",
        msg: "",
        imgUrl: "https://x/c.png",
        count: 2
      }
    )
    assert.strictEqual(gallery(at({ title: "d", imgUrl: "data:image/png;base64,AAAA" }))?.imgUrl, undefined)
  })
})

describe("state tiles show only the latest entry", () => {
  it("leaderboard: stored order, ranks, prefix/suffix", () => {
    const v = leaderboard(
      at(
        { leaderboard: [{ name: "Old", value: 1 }] },
        {
          leaderboard: [
            { name: "Ann", value: 12, prefix: "$" },
            { name: "Bob", value: 9, suffix: " pts" }
          ]
        }
      )
    )
    assert.deepStrictEqual(v, [
      { rank: 1, name: "Ann", value: "$12" },
      { rank: 2, name: "Bob", value: "9 pts" }
    ])
  })
  it("pie: leaderboard or chart rows as slices", () => {
    for (const key of ["leaderboard", "chart"]) {
      const o = opt(
        pie(
          at({
            [key]: [
              { name: "A", value: 3 },
              { name: "B", value: "5" }
            ]
          })
        )
      )
      assert.deepStrictEqual(
        o.series[0]!["data"].map((d: { name: string; value: number }) => [d.name, d.value]),
        [
          ["A", 3],
          ["B", 5]
        ]
      )
      assert.strictEqual(o.series[0]!["data"][1].label.formatter(), "B\n5")
    }
  })
  it("pie: slice labels on a large chart, a legend of the largest slices on a small one, neither on a tiny one", () => {
    const rows = Array.from({ length: 8 }, (_, i) => ({ name: `s${i}`, value: i + 1 }))
    const option = pie(at({ chart: rows }))!
    type Fitted = { series: Array<Record<string, any>>; legend: Record<string, any> }
    const large = fitPie(option, 600, 400) as Fitted
    assert.isTrue(large.series[0]!["label"].show)
    assert.isFalse(large.legend["show"])
    assert.strictEqual(large.series[0]!["label"].fontSize, chartFontSize(600, 400))
    const small = fitPie(option, 260, 80) as Fitted
    assert.isFalse(small.series[0]!["label"].show)
    assert.isTrue(small.legend["show"])
    // 80 px holds four 18-px legend rows: the four largest slices.
    assert.deepStrictEqual(small.legend["data"], ["s7", "s6", "s5", "s4"])
    const tiny = fitPie(option, 90, 60) as Fitted
    assert.isFalse(tiny.series[0]!["label"].show)
    assert.isFalse(tiny.legend["show"])
  })
  it("chart text grows with the chart: 12 px on a small tile, up to 28 px on a whole wall screen", () => {
    assert.strictEqual(chartFontSize(90, 60), 12)
    assert.strictEqual(chartFontSize(1860, 960), 28)
    assert.isAbove(chartFontSize(600, 400), 12)
    const line = lineGraph(at(1, 2, 3))!.option
    const fitted = fitAxes(line, 1860, 960) as { xAxis: Record<string, any>; yAxis: Record<string, any> }
    assert.strictEqual(fitted.xAxis["axisLabel"].fontSize, 28)
    // Ticks spread as the text grows: at most one per 110 px of 14-px text across, scaled to 28 px.
    assert.isAtMost(fitted.xAxis["splitNumber"], Math.floor(1860 / 220))
  })
  it("bar chart: one bar per row in its named colour", () => {
    const o = opt(
      barChart(
        at({
          chart: [
            { name: "Q1", value: 10, color: "yellow" },
            { name: "Q2", value: 4 }
          ]
        })
      )
    )
    assert.deepStrictEqual(o.xAxis?.["data"], ["Q1", "Q2"])
    assert.deepStrictEqual(o.series[0]!["data"][0], { value: 10, itemStyle: { color: namedColors.yellow } })
    assert.strictEqual(o.series[0]!["data"][1].value, 4)
  })
  it("list, label, image, html", () => {
    assert.deepStrictEqual(
      list(at({ list: [{ listItem: "old" }] }, { list: [{ listItem: "newest" }, { listItem: 2 }] })),
      ["newest", "2"]
    )
    assert.strictEqual(label(at({ label: "a" }, { label: "<script>x</script>" })), "<script>x</script>")
    assert.strictEqual(image(at({ imgUrl: "https://example.com/a.png" })), "https://example.com/a.png")
    assert.strictEqual(image(at({ imgUrl: "javascript:alert(1)" })), undefined)
    assert.strictEqual(html(at({ html: "<b>hello</b>" })), "<b>hello</b>")
  })
  it("table: header row and data rows, cells as text", () => {
    assert.deepStrictEqual(
      table(
        at({
          table: [
            ["Name", "Score"],
            ["Ann", "12"],
            ["Bob", 9]
          ]
        })
      ),
      {
        header: ["Name", "Score"],
        rows: [
          ["Ann", "12"],
          ["Bob", "9"]
        ]
      }
    )
  })
  it("multi-bar: one series per header column, one category per row", () => {
    const o = opt(
      multiBar(
        at({
          matrix: [
            ["", "2023", "2024"],
            ["Q1", 3, 5],
            ["Q2", 4, 6]
          ]
        })
      )
    )
    assert.deepStrictEqual(o.xAxis?.["data"], ["Q1", "Q2"])
    assert.deepStrictEqual(
      o.series.map((s) => [s["name"], s["data"]]),
      [
        ["2023", [3, 4]],
        ["2024", [5, 6]]
      ]
    )
  })
})

describe("xy graph", () => {
  it("one scatter point per {x, y}", () => {
    const o = opt(xy(at({ x: 1, y: 2.5 }, { x: "3", y: 4 }, { x: 1 })))
    assert.deepStrictEqual(o.series[0]!["data"], [
      [1, 2.5],
      [3, 4]
    ])
  })
})

describe("html tile srcdoc", () => {
  it("forbids scripts by policy and keeps the markup as given", () => {
    const doc = srcdoc("<b>hi</b>", "dark")
    assert.include(doc, "script-src 'none'")
    assert.include(doc, "<body><b>hi</b></body>")
    assert.include(doc, 'content="dark"')
  })
})
