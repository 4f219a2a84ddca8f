/**
 * The calls of each original client library replayed by compat.test.ts (docs/client-compat.md), and what the stream
 * holds after each.
 */
import type { WidgetType } from "./harness.js"
import type { ClientName } from "./compatClients.js"

/** One call of a client: the point it sends (or its clear command) and what the stream holds afterwards. */
interface Call {
  readonly call: string
  readonly type: WidgetType
  /** The point as the client sends it; absent for the clear command. */
  readonly point?: unknown
  /** The clear command (`{"command": "clear"}`) instead of a point. */
  readonly clear?: true
  /** A point pushed first (for clears and list/table builders). */
  readonly before?: unknown
  /** The points stored; by default the point as sent (one per array element), nothing after a clear. */
  readonly stored?: ReadonlyArray<unknown>
  /** Expected ts of the stored entries, where the client sends timestamps. */
  readonly ts?: ReadonlyArray<number>
}

/** One replayed call: the client, what it sends and the points the stream holds afterwards, in order. */
export interface Replay extends Call {
  readonly client: ClientName
  readonly stored: ReadonlyArray<unknown>
}

const calls = (client: ClientName, list: ReadonlyArray<Call>): Array<Replay> =>
  list.map((c) => ({
    ...c,
    client,
    stored: c.stored ?? (c.clear ? [] : Array.isArray(c.point) ? c.point : [c.point])
  }))

/** Every replayed call, client by client. */
export const replays: ReadonlyArray<Replay> = [
  ...calls("Python 1.5.0 (urllib2)", [
    { call: "pushNumber(s, 42)", type: "number", point: { number: 42 } },
    { call: 'pushNumber(s, {"prefix": "$", "number": 4})', type: "number", point: { prefix: "$", number: 4 } },
    {
      call: "pushNumber(s, {number, timestamp})",
      type: "number",
      point: { number: 13, timestamp: 1329205474 },
      stored: [{ number: 13 }],
      ts: [1329205474]
    },
    {
      call: "pushNumber(s, [timestamped numbers]) to a sparkline",
      type: "sparkline",
      point: [
        { number: 93, timestamp: 1329205474 },
        { number: 35, timestamp: 1329206474 }
      ],
      stored: [{ number: 93 }, { number: 35 }],
      ts: [1329205474, 1329206474]
    },
    {
      call: "pushNumber(s, {delta}) (pass-through dict)",
      type: "number",
      before: 10,
      point: { delta: 5 },
      stored: [{ number: 10 }, { number: 15 }]
    },
    { call: "pushGeo(s, 37.8, -122.6) (no color)", type: "usa-map", point: { latitude: 37.8, longitude: -122.6 } },
    {
      call: "pushGeo(s, [..], [..], ['blue', 'red'])",
      type: "world-map",
      point: [
        { latitude: 37.8, longitude: -122.6, color: "blue" },
        { latitude: 12.3, longitude: 52, color: "red" }
      ]
    },
    {
      call: "pushText(s, [t1, t2], [m1, m2], [u1, None]) with non-ASCII (\\u escapes)",
      type: "text-feed",
      point: [
        { title: "Caf\u00e9", msg: "na\u00efve \u2713", imgUrl: "http://x.example/i.png" },
        { title: "t2", msg: "m2" }
      ]
    },
    {
      call: "pushLeaderboard(s, arr)",
      type: "leaderboard",
      point: {
        leaderboard: [
          { name: "Johnny", value: 84 },
          { name: "Lance", value: 62, prefix: "$" }
        ]
      }
    },
    { call: 'pushList(s, ["a", "b"])', type: "list", point: { list: [{ listItem: "a" }, { listItem: "b" }] } },
    {
      call: "pushPair(s, [10, 23], [12, 90])",
      type: "xy-graph",
      point: [
        { x: 10, y: 12 },
        { x: 23, y: 90 }
      ]
    },
    { call: "pushPair(s, 15, 8)", type: "xy-graph", point: { x: 15, y: 8 } },
    { call: "pushImage(s, url)", type: "image", point: { imgUrl: "https://x.example/a.png" } },
    { call: 'pushLabel(s, "Uptime")', type: "label", point: { label: "Uptime" } },
    { call: "pushHtml(s, html)", type: "html", point: { html: "<b>x</b>" } },
    {
      call: "pushTable(s, header, rows) with a number cell",
      type: "table",
      point: {
        table: [
          ["name", "city", "goals"],
          ["Lionel", "Rosario", 91]
        ]
      },
      stored: [
        {
          table: [
            ["name", "city", "goals"],
            ["Lionel", "Rosario", "91"]
          ]
        }
      ]
    },
    { call: "clear(s)", type: "sparkline", before: 5, clear: true }
  ]),
  ...calls("Python <= 1.3", [
    { call: "pushNumber(s, 42) with the trailing-slash URL", type: "number", point: { number: 42 } }
  ]),
  ...calls("Ruby leftronicapi 1.3 (Net::HTTP)", [
    { call: "push_number(s, 14600) (bare number)", type: "number", point: 14600, stored: [{ number: 14600 }] },
    { call: 'push_number(s, {"number" => 5, "suffix" => "%"})', type: "dial", point: { number: 5, suffix: "%" } },
    {
      call: "push_geo(s, 37.8, -122.6) (color: null)",
      type: "usa-map",
      point: { latitude: 37.8, longitude: -122.6, color: null },
      stored: [{ latitude: 37.8, longitude: -122.6 }]
    },
    {
      call: "push_geo(s, 37.8, -122.6, :blue)",
      type: "usa-map",
      point: { latitude: 37.8, longitude: -122.6, color: "blue" }
    },
    { call: "push_text(s, title, msg) with raw UTF-8", type: "text-feed", point: { title: "Grüße", msg: "日本 ✓" } },
    {
      call: "push_leaderboard(s, 'Johnny' => 84, 'Jamie' => 75)",
      type: "leaderboard",
      point: {
        leaderboard: [
          { name: "Johnny", value: 84 },
          { name: "Jamie", value: 75 }
        ]
      }
    },
    { call: "push_list(s, 'a', 'b')", type: "list", point: { list: [{ listItem: "a" }, { listItem: "b" }] } },
    {
      call: "push_table(s, header, rows)",
      type: "table",
      point: {
        table: [
          ["a", "b"],
          ["1", "2"]
        ]
      }
    },
    {
      call: "push_pair(s, [1, 2], [3, 4])",
      type: "xy-graph",
      point: [
        { x: 1, y: 3 },
        { x: 2, y: 4 }
      ]
    },
    { call: "push_image / push_label / push_html", type: "image", point: { imgUrl: "http://x.example/a.gif" } },
    { call: 'clear("s")', type: "text-feed", before: { title: "T", msg: "M" }, clear: true }
  ]),
  ...calls("PHP leftronic.php (libcurl)", [
    { call: "pushNumber(s, 14600)", type: "number", point: { number: 14600 } },
    { call: 'pushNumber(s, "42") (numeric string)', type: "number", point: { number: "42" }, stored: [{ number: 42 }] },
    ...[" 42", "42 ", "1e3", ".5", "42.", "-7.25"].map((s) => ({
      call: `pushNumber(s, ${JSON.stringify(s)}) (PHP is_numeric form)`,
      type: "number" as const,
      point: { number: s },
      stored: [{ number: Number(s) }]
    })),
    {
      call: "pushNumber(s, array('number' => 5, 'suffix' => '%'))",
      type: "horizontal-bar",
      point: { number: 5, suffix: "%" }
    },
    {
      call: "pushGeo(s, 37.8, -122.6) (color: null)",
      type: "world-map",
      point: { latitude: 37.8, longitude: -122.6, color: null },
      stored: [{ latitude: 37.8, longitude: -122.6 }]
    },
    { call: "pushText(s, title, msg) with \\u escapes", type: "text-feed", point: { title: "Ré", msg: "€5" } },
    { call: "pushImage(s, url) with escaped slashes", type: "image", point: { imgUrl: "http://x.example/i.png" } },
    { call: "pushHtml(s, markup) with escaped slashes", type: "html", point: { html: "<p>a</p><br/>" } },
    { call: "pushLeaderboard / pushList / pushTable", type: "list", point: { list: [{ listItem: "a" }] } },
    { call: "pushPair(s, array(1), array(3)) (always an array)", type: "xy-graph", point: [{ x: 1, y: 3 }] },
    { call: "clear(s)", type: "world-map", before: { latitude: 1, longitude: 1 }, clear: true }
  ]),
  ...calls("Node leftronic 0.1.x", [
    { call: "pushNumber({number: 35, suffix: '%'})", type: "number", point: { number: 35, suffix: "%" } },
    {
      call: "pushNumber({number: [1, 2], timestamp: [..]})",
      type: "line-graph",
      point: [
        { number: 1, timestamp: 1329205474 },
        { number: 2, timestamp: 1329206474 }
      ],
      stored: [{ number: 1 }, { number: 2 }],
      ts: [1329205474, 1329206474]
    },
    { call: "pushText({title, msg})", type: "text-feed", point: { msg: "M", title: "T" } },
    {
      call: "pushGeo({latitude, longitude, color})",
      type: "usa-map",
      point: { latitude: 40.7, longitude: -74, color: "purple" }
    },
    { call: "pushTable({header, data})", type: "table", point: { table: [["h1"], ["a"], ["b"]] } },
    { call: "sendClear(streamName)", type: "xy-graph", before: { x: 1, y: 1 }, clear: true }
  ]),
  ...calls("Java biz.neustar:leftronic (HttpClient 4.1)", [
    { call: 'sendNumber("s", 300) (bare integer)', type: "number", point: 300, stored: [{ number: 300 }] },
    { call: "sendGeoPoint(s, 45.8, -115.6)", type: "usa-map", point: { latitude: 45.8, longitude: -115.6 } },
    {
      call: 'sendText("s", "T", "M") (imgUrl: null)',
      type: "text-feed",
      point: { title: "T", msg: "M", imgUrl: null },
      stored: [{ title: "T", msg: "M" }]
    },
    {
      call: 'sendText("s", "T", "M", url)',
      type: "text-feed",
      point: { title: "T", msg: "M", imgUrl: "http://x.example/i.ico" }
    },
    { call: "sendLeaderboard(s, entries)", type: "pie-chart", point: { leaderboard: [{ name: "Ian", value: 12 }] } },
    { call: 'sendList("s", "Fe", "Fi")', type: "list", point: { list: [{ listItem: "Fe" }, { listItem: "Fi" }] } },
    {
      call: "kik postPoint(s, List<GraphPoint>) (Double number)",
      type: "sparkline",
      point: [{ timestamp: 1329205474, number: 40.0 }],
      stored: [{ number: 40 }],
      ts: [1329205474]
    },
    { call: 'kik postCommand("s", "clear")', type: "sparkline", before: 1, clear: true }
  ]),
  ...calls("Browser jQuery $.post", [
    {
      call: "pushGeo (color undefined, dropped by JSON.stringify)",
      type: "world-map",
      point: { latitude: 1, longitude: 2 }
    }
  ])
]
