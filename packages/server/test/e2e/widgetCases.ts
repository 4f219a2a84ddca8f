/**
 * The points each widget type accepts and what a push of each stores (docs/api.md section 3), for widgets.test.ts.
 */
import type { WidgetType } from "./harness.js"

/** One accepted push: the point as sent and the points stored (one per array element), in order. */
export interface StoreCase {
  readonly title: string
  readonly point: unknown
  readonly stored: ReadonlyArray<unknown>
}

/** A client timestamp in seconds (2023-11-14T22:13:20Z). */
export const T = 1_700_000_000

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

export const storeCases: Readonly<Record<WidgetType, ReadonlyArray<StoreCase>>> = {
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
