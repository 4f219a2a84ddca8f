/**
 * docs/api.md section 3 (what a push stores) and section 4 (clearing), widget type by widget type, over HTTP.
 */
import { describe, expect, it } from "vitest"
import {
  backends,
  clearableTypes,
  emptyPointTypes,
  expectError,
  expectSuccess,
  expectUnchanged,
  nowSeconds,
  numberTypes,
  suiteName,
  timestampTypes,
  useServer,
  type WidgetType
} from "./harness.js"

/** One accepted push: the point as sent and the points stored (one per array element), in order. */
interface StoreCase {
  readonly title: string
  readonly point: unknown
  readonly stored: ReadonlyArray<unknown>
}

const T = 1_700_000_000

const numericCases: ReadonlyArray<StoreCase> = [
  { title: "bare integer", point: 42, stored: [{ number: 42 }] },
  { title: "bare zero", point: 0, stored: [{ number: 0 }] },
  { title: "bare negative fraction", point: -3.25, stored: [{ number: -3.25 }] },
  { title: "numeric string", point: "42", stored: [{ number: 42 }] },
  { title: "negative fractional numeric string", point: "-1.5", stored: [{ number: -1.5 }] },
  { title: "object", point: { number: 7 }, stored: [{ number: 7 }] },
  { title: "object with numeric string", point: { number: "8.5" }, stored: [{ number: 8.5 }] },
  {
    title: "prefix and suffix",
    point: { number: 7, prefix: "$", suffix: "%" },
    stored: [{ number: 7, prefix: "$", suffix: "%" }]
  },
  {
    title: "unknown extra fields dropped",
    point: { number: 1, colour: "x", nested: { a: 1 }, list: [1] },
    stored: [{ number: 1 }]
  },
  { title: "delta on an empty stream starts at 0", point: { delta: 5 }, stored: [{ number: 5 }] },
  { title: "negative delta with prefix", point: { delta: -2, prefix: "$" }, stored: [{ number: -2, prefix: "$" }] },
  { title: "numeric string delta", point: { delta: "3" }, stored: [{ number: 3 }] },
  { title: "timestamped object", point: { number: 9, timestamp: T }, stored: [{ number: 9 }] }
]

const seriesCases: ReadonlyArray<StoreCase> = [
  ...numericCases,
  {
    title: "array of timestamped numbers",
    point: [
      { number: 1, timestamp: T },
      { number: 2.5, timestamp: T + 1 },
      { number: -3, timestamp: T + 1.5 }
    ],
    stored: [{ number: 1 }, { number: 2.5 }, { number: -3 }]
  },
  {
    title: "array with numeric strings, prefix and suffix",
    point: [
      { number: "1", timestamp: T, prefix: "$" },
      { number: 40.0, timestamp: T + 60, suffix: "ms" }
    ],
    stored: [
      { number: 1, prefix: "$" },
      { number: 40, suffix: "ms" }
    ]
  },
  { title: "single-element array", point: [{ number: 7, timestamp: T }], stored: [{ number: 7 }] }
]

const mapCases: ReadonlyArray<StoreCase> = [
  {
    title: "latitude and longitude",
    point: { latitude: 37.8, longitude: -122.6 },
    stored: [{ latitude: 37.8, longitude: -122.6 }]
  },
  {
    title: "every named colour, title and body, as an array",
    point: ["red", "blue", "green", "purple", "yellow"].map((color, i) => ({
      latitude: i,
      longitude: 10 - i,
      color,
      title: `t${i}`,
      body: `b${i}`
    })),
    stored: ["red", "blue", "green", "purple", "yellow"].map((color, i) => ({
      latitude: i,
      longitude: 10 - i,
      color,
      title: `t${i}`,
      body: `b${i}`
    }))
  },
  {
    title: "color null is dropped",
    point: { latitude: 37.8, longitude: -122.6, color: null },
    stored: [{ latitude: 37.8, longitude: -122.6 }]
  },
  {
    title: "unknown colour is stored without a colour",
    point: { latitude: 1, longitude: 2, color: "orange" },
    stored: [{ latitude: 1, longitude: 2 }]
  },
  {
    title: "empty colour is stored without a colour",
    point: { latitude: 1, longitude: 2, color: "" },
    stored: [{ latitude: 1, longitude: 2 }]
  },
  {
    title: "numeric strings stored as numbers",
    point: { latitude: "37.8", longitude: "-122.6" },
    stored: [{ latitude: 37.8, longitude: -122.6 }]
  },
  {
    title: "boundaries",
    point: [
      { latitude: 90, longitude: 180 },
      { latitude: -90, longitude: -180 }
    ],
    stored: [
      { latitude: 90, longitude: 180 },
      { latitude: -90, longitude: -180 }
    ]
  },
  {
    title: "unknown extra fields dropped",
    point: { latitude: 1, longitude: 2, zoom: 3, extra: { a: 1 } },
    stored: [{ latitude: 1, longitude: 2 }]
  }
]

const storeCases: Readonly<Record<WidgetType, ReadonlyArray<StoreCase>>> = {
  number: numericCases,
  "horizontal-bar": numericCases,
  "vertical-bar": numericCases,
  dial: numericCases,
  sparkline: seriesCases,
  "line-graph": seriesCases,
  "usa-map": mapCases,
  "world-map": mapCases,
  "text-feed": [
    { title: "title and msg", point: { title: "T", msg: "M" }, stored: [{ title: "T", msg: "M" }] },
    {
      title: "with https imgUrl",
      point: { title: "T", msg: "M", imgUrl: "https://img.example.com/a.png" },
      stored: [{ title: "T", msg: "M", imgUrl: "https://img.example.com/a.png" }]
    },
    {
      title: "array, one with http imgUrl",
      point: [
        { title: "t1", msg: "m1", imgUrl: "http://x.example/i.png" },
        { title: "t2", msg: "m2" }
      ],
      stored: [
        { title: "t1", msg: "m1", imgUrl: "http://x.example/i.png" },
        { title: "t2", msg: "m2" }
      ]
    },
    {
      title: "unknown extra fields and timestamp dropped",
      point: { title: "T", msg: "M", priority: 1, timestamp: T },
      stored: [{ title: "T", msg: "M" }]
    },
    {
      title: "non-ASCII text",
      point: { title: "café ✓", msg: "日本語 🎉" },
      stored: [{ title: "café ✓", msg: "日本語 🎉" }]
    }
  ],
  gallery: [
    {
      title: "title and imgUrl",
      point: { title: "G", imgUrl: "https://x.example/g.jpg" },
      stored: [{ title: "G", imgUrl: "https://x.example/g.jpg" }]
    },
    {
      title: "with msg, extra dropped",
      point: { title: "G", msg: "m", imgUrl: "http://x.example/g.jpg", extra: true },
      stored: [{ title: "G", msg: "m", imgUrl: "http://x.example/g.jpg" }]
    }
  ],
  "xy-graph": [
    { title: "one pair", point: { x: 1, y: 2 }, stored: [{ x: 1, y: 2 }] },
    { title: "numeric strings", point: { x: "1.5", y: "-2" }, stored: [{ x: 1.5, y: -2 }] },
    {
      title: "array",
      point: [
        { x: 10, y: 12 },
        { x: 23, y: 90 },
        { x: 0, y: 0 }
      ],
      stored: [
        { x: 10, y: 12 },
        { x: 23, y: 90 },
        { x: 0, y: 0 }
      ]
    },
    { title: "single-element array", point: [{ x: 1, y: 3 }], stored: [{ x: 1, y: 3 }] },
    { title: "unknown extra fields dropped", point: { x: 1, y: 2, z: 3 }, stored: [{ x: 1, y: 2 }] }
  ],
  leaderboard: [
    {
      title: "stored in the order given",
      point: {
        leaderboard: [
          { name: "Lance", value: 62, prefix: "$" },
          { name: "Johnny", value: 84, suffix: "pts" },
          { name: "Ann", value: 1.5, prefix: "#", suffix: "!" }
        ]
      },
      stored: [
        {
          leaderboard: [
            { name: "Lance", value: 62, prefix: "$" },
            { name: "Johnny", value: 84, suffix: "pts" },
            { name: "Ann", value: 1.5, prefix: "#", suffix: "!" }
          ]
        }
      ]
    },
    {
      title: "numeric string values, unknown fields dropped",
      point: { leaderboard: [{ name: "a", value: "12", rank: 1 }], extra: "x" },
      stored: [{ leaderboard: [{ name: "a", value: 12 }] }]
    },
    {
      title: "leaderboardItem on an empty stream",
      point: { leaderboardItem: { name: "a", value: 3 } },
      stored: [{ leaderboard: [{ name: "a", value: 3 }] }]
    }
  ],
  "pie-chart": [
    {
      title: "under leaderboard",
      point: {
        leaderboard: [
          { name: "x", value: 1 },
          { name: "y", value: 2 }
        ]
      },
      stored: [
        {
          leaderboard: [
            { name: "x", value: 1 },
            { name: "y", value: 2 }
          ]
        }
      ]
    },
    {
      title: "under chart is stored under leaderboard",
      point: {
        chart: [
          { name: "x", value: 3 },
          { name: "y", value: "4" }
        ]
      },
      stored: [
        {
          leaderboard: [
            { name: "x", value: 3 },
            { name: "y", value: 4 }
          ]
        }
      ]
    }
  ],
  "bar-chart": [
    {
      title: "under chart, with colours",
      point: {
        chart: [
          { name: "a", value: 1, color: "yellow" },
          { name: "b", value: 2.5 }
        ]
      },
      stored: [
        {
          chart: [
            { name: "a", value: 1, color: "yellow" },
            { name: "b", value: 2.5 }
          ]
        }
      ]
    },
    {
      title: "under leaderboard is stored under chart",
      point: { leaderboard: [{ name: "a", value: "7", color: "blue" }] },
      stored: [{ chart: [{ name: "a", value: 7, color: "blue" }] }]
    }
  ],
  list: [
    {
      title: "whole list",
      point: { list: [{ listItem: "a" }, { listItem: "b" }] },
      stored: [{ list: [{ listItem: "a" }, { listItem: "b" }] }]
    },
    { title: "listItem on an empty stream", point: { listItem: "x" }, stored: [{ list: [{ listItem: "x" }] }] }
  ],
  image: [
    {
      title: "imgUrl",
      point: { imgUrl: "https://x.example/a.png?s=1" },
      stored: [{ imgUrl: "https://x.example/a.png?s=1" }]
    },
    {
      title: "unknown extra fields dropped",
      point: { imgUrl: "http://x.example/a.png", alt: "x" },
      stored: [{ imgUrl: "http://x.example/a.png" }]
    }
  ],
  label: [
    { title: "label", point: { label: "Uptime" }, stored: [{ label: "Uptime" }] },
    { title: "unknown extra fields dropped", point: { label: "x", color: "red" }, stored: [{ label: "x" }] }
  ],
  table: [
    {
      title: "header and rows, number cells stored as strings",
      point: {
        table: [
          ["name", "city", "n"],
          ["Lionel", "Rosario", 10],
          ["Ann", "Oslo", 2.5]
        ]
      },
      stored: [
        {
          table: [
            ["name", "city", "n"],
            ["Lionel", "Rosario", "10"],
            ["Ann", "Oslo", "2.5"]
          ]
        }
      ]
    },
    { title: "header only", point: { table: [["a", "b"]] }, stored: [{ table: [["a", "b"]] }] }
  ],
  html: [
    { title: "markup", point: { html: "<b>bold</b> &amp; <i>x</i>" }, stored: [{ html: "<b>bold</b> &amp; <i>x</i>" }] }
  ],
  "multi-bar-graph": [
    {
      title: "matrix, numeric strings stored as numbers",
      point: {
        matrix: [
          ["", "s1", "s2"],
          ["c1", 1, 2],
          ["c2", "3", 4.5]
        ]
      },
      stored: [
        {
          matrix: [
            ["", "s1", "s2"],
            ["c1", 1, 2],
            ["c2", 3, 4.5]
          ]
        }
      ]
    }
  ]
}

/** Points rejected with 400 `invalid_point`, per type. */
const invalidPoints: Readonly<Record<WidgetType, ReadonlyArray<readonly [string, unknown]>>> = {
  number: [
    ["non-numeric string", "abc"],
    ["string NaN", "NaN"],
    ["string Infinity", "Infinity"],
    ["boolean", true],
    ["number and delta", { number: 1, delta: 1 }],
    ["object without number or delta", { prefix: "$" }],
    ["non-numeric number field", { number: "12abc" }],
    ["empty-string number field", { number: "" }],
    ["blank number field", { number: "   " }],
    ["non-numeric delta", { delta: "x" }],
    ["an array (number widgets take no arrays)", [1, 2]],
    ["a map point", { latitude: 1, longitude: 2 }]
  ],
  "horizontal-bar": [
    ["non-numeric string", "abc"],
    ["number and delta", { number: 1, delta: 1 }]
  ],
  "vertical-bar": [
    ["non-numeric string", "abc"],
    ["number and delta", { number: 1, delta: 1 }]
  ],
  dial: [
    ["non-numeric string", "abc"],
    ["number and delta", { number: 1, delta: 1 }]
  ],
  sparkline: [
    [
      "array with descending timestamps",
      [
        { number: 1, timestamp: T + 10 },
        { number: 2, timestamp: T }
      ]
    ],
    [
      "array with equal timestamps",
      [
        { number: 1, timestamp: T },
        { number: 2, timestamp: T }
      ]
    ],
    ["array element without timestamp", [{ number: 1, timestamp: T }, { number: 2 }]],
    [
      "array element with a non-numeric number",
      [
        { number: 1, timestamp: T },
        { number: "x", timestamp: T + 1 }
      ]
    ],
    ["non-numeric string", "abc"]
  ],
  "line-graph": [
    [
      "array with descending timestamps",
      [
        { number: 1, timestamp: T + 10 },
        { number: 2, timestamp: T + 5 },
        { number: 3, timestamp: T + 20 }
      ]
    ],
    ["number and delta", { number: 1, delta: 1 }]
  ],
  "usa-map": [
    ["latitude above 90", { latitude: 90.5, longitude: 0 }],
    ["longitude below -180", { latitude: 0, longitude: -180.5 }],
    ["missing longitude", { latitude: 1 }],
    ["non-numeric latitude", { latitude: "north", longitude: 1 }],
    [
      "array with one bad element",
      [
        { latitude: 1, longitude: 1 },
        { latitude: 100, longitude: 1 }
      ]
    ]
  ],
  "world-map": [
    ["longitude above 180", { latitude: 0, longitude: 181 }],
    ["latitude below -90", { latitude: -91, longitude: 0 }]
  ],
  "text-feed": [
    ["missing title", { msg: "M" }],
    ["ftp imgUrl", { title: "T", msg: "M", imgUrl: "ftp://x.example/a.png" }],
    ["relative imgUrl", { title: "T", msg: "M", imgUrl: "/a.png" }],
    ["not a URL", { title: "T", msg: "M", imgUrl: "not a url" }],
    [
      "array with one bad element",
      [
        { title: "T", msg: "M" },
        { title: "T", msg: "M", imgUrl: "javascript:alert(1)" }
      ]
    ]
  ],
  gallery: [
    ["missing imgUrl", { title: "G" }],
    ["bad imgUrl", { title: "G", imgUrl: "file:///etc/passwd" }]
  ],
  "xy-graph": [
    ["missing y", { x: 1 }],
    ["non-numeric x", { x: "a", y: 1 }],
    [
      "array with one bad element",
      [
        { x: 1, y: 1 },
        { x: 2, y: "NaN" }
      ]
    ]
  ],
  leaderboard: [
    ["non-numeric value", { leaderboard: [{ name: "a", value: "abc" }] }],
    ["item without name", { leaderboard: [{ value: 1 }] }],
    ["leaderboard not an array", { leaderboard: "x" }],
    ["leaderboardItem without value", { leaderboardItem: { name: "a" } }]
  ],
  "pie-chart": [
    ["non-numeric value", { chart: [{ name: "a", value: "abc" }] }],
    ["leaderboardItem (leaderboard widgets only)", { leaderboardItem: { name: "a", value: 1 } }]
  ],
  "bar-chart": [
    ["non-numeric value", { chart: [{ name: "a", value: "x" }] }],
    ["item without name", { chart: [{ value: 1 }] }]
  ],
  list: [
    ["list not an array", { list: "x" }],
    ["a number point", 5]
  ],
  image: [
    ["bad imgUrl", { imgUrl: "not a url" }],
    ["relative imgUrl", { imgUrl: "img/a.png" }]
  ],
  label: [["a number point", 5]],
  html: [["a number point", 5]],
  table: [
    [
      "row wider than header",
      {
        table: [
          ["a", "b"],
          ["1", "2", "3"]
        ]
      }
    ],
    ["table not an array", { table: "x" }]
  ],
  "multi-bar-graph": [
    [
      "row with too few numbers",
      {
        matrix: [
          ["", "s1", "s2"],
          ["c1", 1]
        ]
      }
    ],
    [
      "non-numeric value",
      {
        matrix: [
          ["", "s1"],
          ["c1", "x"]
        ]
      }
    ]
  ]
}

/** A valid non-empty point per type, used to fill a stream before clearing it. */
const samplePoint: Readonly<Record<WidgetType, unknown>> = {
  number: 5,
  "horizontal-bar": 5,
  "vertical-bar": 5,
  dial: 5,
  sparkline: 5,
  "line-graph": 5,
  "usa-map": { latitude: 1, longitude: 2 },
  "world-map": { latitude: 1, longitude: 2 },
  "text-feed": { title: "T", msg: "M" },
  leaderboard: { leaderboard: [{ name: "a", value: 1 }] },
  "pie-chart": { leaderboard: [{ name: "a", value: 1 }] },
  "bar-chart": { chart: [{ name: "a", value: 1 }] },
  list: { list: [{ listItem: "a" }] },
  image: { imgUrl: "https://x.example/a.png" },
  label: { label: "x" },
  table: { table: [["h"], ["c"]] },
  gallery: { title: "G", imgUrl: "https://x.example/g.png" },
  html: { html: "<p>x</p>" },
  "xy-graph": { x: 1, y: 2 },
  "multi-bar-graph": {
    matrix: [
      ["", "s"],
      ["c", 1]
    ]
  }
}

/** Empty points that clear a stream of the given type (docs/api.md section 4). */
const emptyForms = (type: WidgetType): ReadonlyArray<readonly [string, unknown]> => {
  const common: Array<readonly [string, unknown]> = [
    ["null", null],
    ['""', ""],
    ["{}", {}],
    ["[]", []]
  ]
  const keys: Partial<Record<WidgetType, ReadonlyArray<string>>> = {
    leaderboard: ["leaderboard"],
    "pie-chart": ["leaderboard", "chart"],
    "bar-chart": ["chart", "leaderboard"],
    list: ["list"],
    table: ["table"],
    "multi-bar-graph": ["matrix"]
  }
  return [...common, ...(keys[type] ?? []).map((k) => [`{"${k}": []}`, { [k]: [] }] as const)]
}

for (const backend of backends) {
  describe(suiteName("widget types", backend), () => {
    const ctx = useServer(backend)

    describe("accepted points are stored as the contract says", () => {
      for (const type of Object.keys(storeCases) as Array<WidgetType>) {
        for (const c of storeCases[type]) {
          it(`${type}: ${c.title}`, async () => {
            const { api } = ctx
            const { accessKey } = await api.setup({ s: type })
            const before = nowSeconds()
            expectSuccess(await api.pushPoint(accessKey, "s", c.point))
            const all = await api.entries(accessKey, "s")
            expect(all.map((e) => e.point)).toEqual(c.stored)
            expect(await api.latest(accessKey, "s")).toEqual(c.stored[c.stored.length - 1])
            // ts is the client timestamp where the type takes one, otherwise the receive time.
            const sent = Array.isArray(c.point) ? c.point : [c.point]
            expect(all).toHaveLength(sent.length)
            sent.forEach((p, i) => {
              const stamp =
                timestampTypes.includes(type) && typeof p === "object" && p !== null && "timestamp" in p
                  ? Number((p as { timestamp: unknown }).timestamp)
                  : undefined
              if (stamp !== undefined) expect(all[i]!.ts).toBe(stamp)
              else {
                expect(all[i]!.ts).toBeGreaterThanOrEqual(before - 5)
                expect(all[i]!.ts).toBeLessThanOrEqual(nowSeconds() + 5)
              }
            })
          })
        }
      }
    })

    describe("invalid points are rejected with 400 invalid_point and store nothing", () => {
      for (const type of Object.keys(invalidPoints) as Array<WidgetType>) {
        for (const [title, point] of invalidPoints[type]) {
          it(`${type}: ${title}`, async () => {
            const { api } = ctx
            const { accessKey } = await api.setup({ s: type })
            expectSuccess(await api.pushPoint(accessKey, "s", samplePoint[type]))
            await expectUnchanged(api, accessKey, ["s"], async () => {
              const r = await api.pushPoint(accessKey, "s", point)
              expectError(r, 400, "invalid_point")
              // Validation errors point into the request body.
              expect(r.json.error.path, r.text).toMatch(/^point\b/)
            })
          })
        }
      }

      it("number: a JSON number that overflows to Infinity (1e400)", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        await expectUnchanged(api, accessKey, ["s"], async () =>
          expectError(
            await api.pushRaw(`{"accessKey":${JSON.stringify(accessKey)},"streamName":"s","point":1e400}`),
            400,
            "invalid_point"
          )
        )
      })

      it("leaderboard: the error path points at the bad value", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "leaderboard" })
        const point = {
          leaderboard: [
            { name: "a", value: 1 },
            { name: "b", value: "abc" }
          ]
        }
        expectError(await api.pushPoint(accessKey, "s", point), 400, "invalid_point", "point.leaderboard[1].value")
      })
    })

    describe("delta", () => {
      it("adds to the latest number, starting at 0, one entry per push", async () => {
        const { api } = ctx
        for (const type of ["number", "dial", "sparkline"] as const) {
          const { accessKey } = await api.setup({ s: type })
          for (const delta of [2, 3, -10, 0.5, "1.5"]) expectSuccess(await api.pushPoint(accessKey, "s", { delta }))
          expect(await api.points(accessKey, "s")).toEqual([
            { number: 2 },
            { number: 5 },
            { number: -5 },
            { number: -4.5 },
            { number: -3 }
          ])
        }
      })

      it("carries prefix and suffix over unless the push gives them", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        expectSuccess(await api.pushPoint(accessKey, "s", { number: 10, prefix: "$", suffix: "k" }))
        expectSuccess(await api.pushPoint(accessKey, "s", { delta: 1 }))
        expect(await api.latest(accessKey, "s")).toEqual({ number: 11, prefix: "$", suffix: "k" })
        expectSuccess(await api.pushPoint(accessKey, "s", { delta: 1, prefix: "€" }))
        expect(await api.latest(accessKey, "s")).toEqual({ number: 12, prefix: "€", suffix: "k" })
        expectSuccess(await api.pushPoint(accessKey, "s", { delta: -2, suffix: "m" }))
        expect(await api.latest(accessKey, "s")).toEqual({ number: 10, prefix: "€", suffix: "m" })
      })

      it("follows a plain number push", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "vertical-bar" })
        expectSuccess(await api.pushPoint(accessKey, "s", 100))
        expectSuccess(await api.pushPoint(accessKey, "s", { delta: -1 }))
        expect(await api.points(accessKey, "s")).toEqual([{ number: 100 }, { number: 99 }])
      })

      it("starts from 0 again after an empty-point clear", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        expectSuccess(await api.pushPoint(accessKey, "s", { number: 10, prefix: "$" }))
        expectSuccess(await api.pushPoint(accessKey, "s", null))
        expect(await api.entries(accessKey, "s")).toEqual([])
        expectSuccess(await api.pushPoint(accessKey, "s", { delta: 1 }))
        expect(await api.points(accessKey, "s")).toEqual([{ number: 1 }])
      })

      it("starts from 0 again after a clear command", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "line-graph" })
        expectSuccess(await api.pushPoint(accessKey, "s", 10))
        expectSuccess(await api.push({ accessKey, streamName: "s", command: "clear" }))
        expectSuccess(await api.pushPoint(accessKey, "s", { delta: 4 }))
        expect(await api.points(accessKey, "s")).toEqual([{ number: 4 }])
      })
    })

    describe("client timestamps", () => {
      for (const type of timestampTypes) {
        it(`${type}: ts equals the timestamp; the same timestamp replaces the entry`, async () => {
          const { api } = ctx
          const { accessKey } = await api.setup({ s: type })
          expectSuccess(await api.pushPoint(accessKey, "s", { number: 1, timestamp: T }))
          expectSuccess(await api.pushPoint(accessKey, "s", { number: 2, timestamp: T + 0.25 }))
          expectSuccess(await api.pushPoint(accessKey, "s", { number: 3, timestamp: T, suffix: "x" }))
          expect(await api.entries(accessKey, "s")).toEqual([
            { ts: T, point: { number: 3, suffix: "x" } },
            { ts: T + 0.25, point: { number: 2 } }
          ])
        })
      }

      it("out-of-order timestamps are read back in ascending ts order; no since gives the highest ts", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "sparkline" })
        const past = Math.floor(nowSeconds()) - 3600
        expectSuccess(await api.pushPoint(accessKey, "s", { number: 1, timestamp: past }))
        expectSuccess(await api.pushPoint(accessKey, "s", { number: 2, timestamp: T }))
        expectSuccess(await api.pushPoint(accessKey, "s", 3))
        const all = await api.entries(accessKey, "s")
        expect(all.map((e) => e.point)).toEqual([{ number: 2 }, { number: 1 }, { number: 3 }])
        expect(all.map((e) => e.ts).slice(0, 2)).toEqual([T, past])
        expect(await api.entries(accessKey, "s", "")).toEqual([all[2]])
      })

      it("a server-assigned ts never goes below the stream's highest ts (a future client timestamp + 1 µs)", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        const future = Math.floor(nowSeconds()) + 3600
        expectSuccess(await api.pushPoint(accessKey, "s", { number: 1, timestamp: future }))
        expectSuccess(await api.pushPoint(accessKey, "s", 2))
        const all = await api.entries(accessKey, "s")
        expect(all.map((e) => e.point)).toEqual([{ number: 1 }, { number: 2 }])
        expect(all[0]!.ts).toBe(future)
        expect(Math.round((all[1]!.ts - future) * 1e6)).toBe(1)
        expect(await api.entries(accessKey, "s", "")).toEqual([all[1]])
      })

      it("a numeric-string timestamp is accepted", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        expectSuccess(await api.pushPoint(accessKey, "s", { number: 1, timestamp: String(T + 7) }))
        expect(await api.entries(accessKey, "s")).toEqual([{ ts: T + 7, point: { number: 1 } }])
      })

      it("an array push replaces entries with the same timestamps and keeps the others", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "sparkline" })
        expectSuccess(
          await api.pushPoint(accessKey, "s", [
            { number: 1, timestamp: T },
            { number: 2, timestamp: T + 1 }
          ])
        )
        expectSuccess(
          await api.pushPoint(accessKey, "s", [
            { number: 20, timestamp: T + 1 },
            { number: 30, timestamp: T + 2 }
          ])
        )
        expect(await api.entries(accessKey, "s")).toEqual([
          { ts: T, point: { number: 1 } },
          { ts: T + 1, point: { number: 20 } },
          { ts: T + 2, point: { number: 30 } }
        ])
      })

      it("a retried array push does not duplicate entries", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "line-graph" })
        const point = [
          { number: 93, timestamp: 1329205474 },
          { number: 35, timestamp: 1329206474 }
        ]
        expectSuccess(await api.pushPoint(accessKey, "s", point))
        expectSuccess(await api.pushPoint(accessKey, "s", point))
        expect(await api.entries(accessKey, "s")).toEqual([
          { ts: 1329205474, point: { number: 93 } },
          { ts: 1329206474, point: { number: 35 } }
        ])
      })

      it("an array push with timestamps not ascending stores nothing, even where some would be new", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "sparkline" })
        expectSuccess(await api.pushPoint(accessKey, "s", { number: 1, timestamp: T }))
        await expectUnchanged(api, accessKey, ["s"], async () =>
          expectError(
            await api.pushPoint(accessKey, "s", [
              { number: 5, timestamp: T + 100 },
              { number: 6, timestamp: T + 200 },
              { number: 7, timestamp: T + 150 }
            ]),
            400,
            "invalid_point"
          )
        )
      })

      it("server-assigned ts are strictly increasing, microsecond precision", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number", x: "xy-graph" })
        for (let i = 0; i < 30; i++) expectSuccess(await api.pushPoint(accessKey, "s", i))
        expectSuccess(
          await api.pushPoint(
            accessKey,
            "x",
            Array.from({ length: 50 }, (_, i) => ({ x: i, y: i }))
          )
        )
        for (const stream of ["s", "x"]) {
          const r = await api.read(accessKey, stream, "?since=0")
          const data = r.json.data as Array<{ ts: number }>
          for (let i = 1; i < data.length; i++) expect(data[i]!.ts).toBeGreaterThan(data[i - 1]!.ts)
          // At most six decimals in the JSON text.
          for (const m of r.text.matchAll(/"ts":\s*(-?[0-9.eE+-]+)/g)) expect(m[1]).toMatch(/^\d+(\.\d{1,6})?$/)
        }
        const xs = await api.points(accessKey, "x")
        expect(xs).toEqual(Array.from({ length: 50 }, (_, i) => ({ x: i, y: i })))
      })
    })

    describe("leaderboardItem", () => {
      it("adds new names and keeps the board ordered by value, highest first", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "leaderboard" })
        expectSuccess(
          await api.pushPoint(accessKey, "s", {
            leaderboard: [
              { name: "x", value: 1 },
              { name: "y", value: 9 }
            ]
          })
        )
        expectSuccess(await api.pushPoint(accessKey, "s", { leaderboardItem: { name: "z", value: 5 } }))
        expect(await api.latest(accessKey, "s")).toEqual({
          leaderboard: [
            { name: "y", value: 9 },
            { name: "z", value: 5 },
            { name: "x", value: 1 }
          ]
        })
        // Each push stores the whole resulting board as a new entry.
        expect(await api.entries(accessKey, "s")).toHaveLength(2)
      })

      it("replaces the value, prefix and suffix of an existing name, then re-sorts", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "leaderboard" })
        expectSuccess(
          await api.pushPoint(accessKey, "s", {
            leaderboard: [
              { name: "a", value: 5, prefix: "$" },
              { name: "b", value: 3 },
              { name: "c", value: 1 }
            ]
          })
        )
        expectSuccess(
          await api.pushPoint(accessKey, "s", { leaderboardItem: { name: "c", value: "10", prefix: "€", suffix: "k" } })
        )
        expect(await api.latest(accessKey, "s")).toEqual({
          leaderboard: [
            { name: "c", value: 10, prefix: "€", suffix: "k" },
            { name: "a", value: 5, prefix: "$" },
            { name: "b", value: 3 }
          ]
        })
      })

      it("is stable for equal values", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "leaderboard" })
        expectSuccess(
          await api.pushPoint(accessKey, "s", {
            leaderboard: [
              { name: "a", value: 5 },
              { name: "b", value: 3 }
            ]
          })
        )
        expectSuccess(await api.pushPoint(accessKey, "s", { leaderboardItem: { name: "c", value: 3 } }))
        expect(await api.latest(accessKey, "s")).toEqual({
          leaderboard: [
            { name: "a", value: 5 },
            { name: "b", value: 3 },
            { name: "c", value: 3 }
          ]
        })
        expectSuccess(await api.pushPoint(accessKey, "s", { leaderboardItem: { name: "d", value: 4 } }))
        expectSuccess(await api.pushPoint(accessKey, "s", { leaderboardItem: { name: "e", value: 3 } }))
        expect(await api.latest(accessKey, "s")).toEqual({
          leaderboard: [
            { name: "a", value: 5 },
            { name: "d", value: 4 },
            { name: "b", value: 3 },
            { name: "c", value: 3 },
            { name: "e", value: 3 }
          ]
        })
      })

      it("builds on the latest board after an empty-point clear", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "leaderboard" })
        expectSuccess(await api.pushPoint(accessKey, "s", { leaderboard: [{ name: "old", value: 100 }] }))
        expectSuccess(await api.pushPoint(accessKey, "s", { leaderboard: [] }))
        expectSuccess(await api.pushPoint(accessKey, "s", { leaderboardItem: { name: "new", value: 1 } }))
        expect(await api.points(accessKey, "s")).toEqual([{ leaderboard: [{ name: "new", value: 1 }] }])
      })
    })

    describe("listItem", () => {
      it("goes to the top of the latest list", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "list" })
        expectSuccess(await api.pushPoint(accessKey, "s", { list: [{ listItem: "a" }, { listItem: "b" }] }))
        expectSuccess(await api.pushPoint(accessKey, "s", { listItem: "c" }))
        expectSuccess(await api.pushPoint(accessKey, "s", { listItem: "d" }))
        expect(await api.points(accessKey, "s")).toEqual([
          { list: [{ listItem: "a" }, { listItem: "b" }] },
          { list: [{ listItem: "c" }, { listItem: "a" }, { listItem: "b" }] },
          { list: [{ listItem: "d" }, { listItem: "c" }, { listItem: "a" }, { listItem: "b" }] }
        ])
      })
    })

    describe("tableRow", () => {
      it("goes directly under the header row; number cells become strings", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "table" })
        expectSuccess(
          await api.pushPoint(accessKey, "s", {
            table: [
              ["name", "n"],
              ["a", "1"]
            ]
          })
        )
        expectSuccess(await api.pushPoint(accessKey, "s", { tableRow: ["b", 2] }))
        expectSuccess(await api.pushPoint(accessKey, "s", { tableRow: ["c", "3"] }))
        expect(await api.latest(accessKey, "s")).toEqual({
          table: [
            ["name", "n"],
            ["c", "3"],
            ["b", "2"],
            ["a", "1"]
          ]
        })
        expect(await api.entries(accessKey, "s")).toHaveLength(3)
      })

      it("a row whose width differs from the header is 400 invalid_point and changes nothing", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "table" })
        expectSuccess(
          await api.pushPoint(accessKey, "s", {
            table: [
              ["name", "n"],
              ["a", "1"]
            ]
          })
        )
        await expectUnchanged(api, accessKey, ["s"], async () => {
          expectError(await api.pushPoint(accessKey, "s", { tableRow: ["b", "2", "x"] }), 400, "invalid_point")
          expectError(await api.pushPoint(accessKey, "s", { tableRow: ["b"] }), 400, "invalid_point")
        })
      })
    })

    describe("events append one entry per push", () => {
      it("text-feed keeps every pushed item, oldest first", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "text-feed" })
        for (let i = 0; i < 5; i++) expectSuccess(await api.pushPoint(accessKey, "s", { title: `t${i}`, msg: "m" }))
        expect(await api.points(accessKey, "s")).toEqual(
          Array.from({ length: 5 }, (_, i) => ({ title: `t${i}`, msg: "m" }))
        )
      })

      it("an array push with one bad element stores none of it", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "world-map" })
        await expectUnchanged(api, accessKey, ["s"], async () =>
          expectError(
            await api.pushPoint(
              accessKey,
              "s",
              Array.from({ length: 20 }, (_, i) => ({ latitude: i === 19 ? 95 : i, longitude: 0 }))
            ),
            400,
            "invalid_point"
          )
        )
        expect(await api.entries(accessKey, "s")).toEqual([])
      })
    })

    describe("clear command", () => {
      for (const type of clearableTypes) {
        it(`${type}: deletes every stored entry`, async () => {
          const { api } = ctx
          const { accessKey } = await api.setup({ s: type, other: type })
          for (let i = 0; i < 3; i++) expectSuccess(await api.pushPoint(accessKey, "s", samplePoint[type]))
          expectSuccess(await api.pushPoint(accessKey, "other", samplePoint[type]))
          expectSuccess(await api.push({ accessKey, streamName: "s", command: "clear" }))
          expect(await api.entries(accessKey, "s")).toEqual([])
          expect(await api.entries(accessKey, "s", "")).toEqual([])
          // Only that stream.
          expect(await api.entries(accessKey, "other")).toHaveLength(1)
          // Clearing an empty stream is fine too; new pushes land after it.
          expectSuccess(await api.push({ accessKey, streamName: "s", command: "clear" }))
          expectSuccess(await api.pushPoint(accessKey, "s", samplePoint[type]))
          expect(await api.entries(accessKey, "s")).toHaveLength(1)
        })
      }

      for (const type of emptyPointTypes) {
        it(`${type}: clear is 400 unsupported_command, telling to push an empty point`, async () => {
          const { api } = ctx
          const { accessKey } = await api.setup({ s: type })
          expectSuccess(await api.pushPoint(accessKey, "s", samplePoint[type]))
          await expectUnchanged(api, accessKey, ["s"], async () => {
            const r = await api.push({ accessKey, streamName: "s", command: "clear" })
            expectError(r, 400, "unsupported_command")
            expect(r.json.error.message).toMatch(/empty/i)
          })
        })
      }
    })

    describe("empty point clears", () => {
      for (const type of emptyPointTypes) {
        for (const [title, empty] of emptyForms(type)) {
          it(`${type}: ${title}`, async () => {
            const { api } = ctx
            const { accessKey } = await api.setup({ s: type, other: type })
            expectSuccess(await api.pushPoint(accessKey, "s", samplePoint[type]))
            expectSuccess(await api.pushPoint(accessKey, "s", samplePoint[type]))
            expectSuccess(await api.pushPoint(accessKey, "other", samplePoint[type]))
            expectSuccess(await api.pushPoint(accessKey, "s", empty))
            expect(await api.entries(accessKey, "s")).toEqual([])
            expect(await api.entries(accessKey, "s", "")).toEqual([])
            expect(await api.entries(accessKey, "other")).toHaveLength(1)
          })
        }
      }
    })

    it("the number family accepts every numeric form (sanity across the four types)", async () => {
      const { api } = ctx
      for (const type of numberTypes) {
        const { accessKey } = await api.setup({ s: type })
        for (const p of [1, "2", { number: 3 }, { delta: 1 }]) expectSuccess(await api.pushPoint(accessKey, "s", p))
        expect(await api.points(accessKey, "s")).toEqual([{ number: 1 }, { number: 2 }, { number: 3 }, { number: 4 }])
      }
    })
  })
}
