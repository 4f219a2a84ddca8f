/**
 * Points each widget type rejects (docs/api.md section 3), a valid point per type and the empty points that clear a
 * stream (section 4), for the widget type suites.
 */
import type { WidgetType } from "./harness.js"
import { T } from "./widgetCases.js"

/** Points rejected with 400 `invalid_point`, per type. */
export const invalidPoints: Readonly<Record<WidgetType, ReadonlyArray<readonly [string, unknown]>>> = {
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
export const samplePoint: Readonly<Record<WidgetType, unknown>> = {
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
export const emptyForms = (type: WidgetType): ReadonlyArray<readonly [string, unknown]> => {
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
