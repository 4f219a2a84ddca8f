/**
 * Replays of what the original client libraries put on the wire (docs/client-compat.md): exact paths, headers,
 * Content-Type labels and JSON as each encoder writes it. The contract says a script written for the original
 * service must work by changing the host only. Also: HTTP framing errors (a body longer than its
 * Content-Length, as the Node client sends for non-ASCII text) and `Expect: 100-continue` (libcurl).
 */
import { describe, expect, it } from "vitest"
import {
  type Api,
  backends,
  expectSuccess,
  nodeRequest,
  rawExchange,
  suiteName,
  useServer,
  type WidgetType
} from "./harness.js"

const escapeNonAscii = (json: string): string =>
  json.replace(/[\u007f-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"))

/** Python 2 `json.dumps` defaults: `", "` and `": "` separators, `ensure_ascii`. */
const pythonJson = (v: unknown): string => {
  if (Array.isArray(v)) return "[" + v.map(pythonJson).join(", ") + "]"
  if (typeof v === "object" && v !== null)
    return (
      "{" +
      Object.entries(v)
        .map(([k, x]) => `${escapeNonAscii(JSON.stringify(k))}: ${pythonJson(x)}`)
        .join(", ") +
      "}"
    )
  return escapeNonAscii(JSON.stringify(v))
}

/** PHP `json_encode` defaults: compact, `\/` for slashes, `\uXXXX` for non-ASCII. */
const phpJson = (v: unknown): string => escapeNonAscii(JSON.stringify(v)).replace(/\//g, "\\/")

/** Compact JSON with raw UTF-8 (Ruby `to_json`, Node `JSON.stringify`, Jackson). */
const compactJson = (v: unknown): string => JSON.stringify(v)

/** How one client frames a push: path, headers (given the body) and JSON encoder. */
interface Client {
  readonly path: string
  readonly encode: (v: unknown) => string
  readonly headers: (body: string) => Record<string, string>
}

const bytes = (s: string): string => String(Buffer.byteLength(s))

const clients = {
  "Python 1.5.0 (urllib2)": {
    path: "/customSend",
    encode: pythonJson,
    headers: (body) => ({
      "Accept-Encoding": "identity",
      "Content-Length": bytes(body),
      "Content-Type": "application/x-www-form-urlencoded",
      Connection: "close",
      "User-Agent": "Python-urllib/2.7"
    })
  },
  "Python <= 1.3": {
    path: "/customSend/",
    encode: pythonJson,
    headers: (body) => ({
      "Accept-Encoding": "identity",
      "Content-Length": bytes(body),
      "Content-Type": "application/x-www-form-urlencoded",
      Connection: "close",
      "User-Agent": "Python-urllib/2.7"
    })
  },
  "Ruby leftronicapi 1.3 (Net::HTTP)": {
    path: "/customSend/",
    encode: compactJson,
    headers: (body) => ({
      "Accept-Encoding": "gzip;q=1.0,deflate;q=0.6,identity;q=0.3",
      Accept: "application/json",
      "User-Agent": "Ruby",
      "Content-Type": "application/json",
      "Content-Length": bytes(body)
    })
  },
  "PHP leftronic.php (libcurl)": {
    path: "/customSend/",
    encode: phpJson,
    headers: (body) => ({
      Accept: "*/*",
      "Content-Length": bytes(body),
      "Content-Type": "application/x-www-form-urlencoded"
    })
  },
  "Node leftronic 0.1.x": {
    path: "/customSend",
    encode: compactJson,
    // json.length: UTF-16 code units, equal to the byte length for the ASCII bodies used here.
    headers: (body) => ({
      "Content-Type": "application/x-www-form-urlencoded",
      "Content-Length": String(body.length),
      Connection: "keep-alive"
    })
  },
  "Java biz.neustar:leftronic (HttpClient 4.1)": {
    path: "/customSend/",
    encode: compactJson,
    headers: (body) => ({
      "Content-Length": bytes(body),
      Connection: "Keep-Alive",
      "User-Agent": "Leftronic Client/DEVELOPMENT"
    })
  },
  "Browser jQuery $.post": {
    path: "/customSend/",
    encode: compactJson,
    headers: (body) => ({
      "Content-Type": "application/x-www-form-urlencoded; charset=UTF-8",
      "Content-Length": bytes(body),
      Accept: "*/*",
      "X-Requested-With": "XMLHttpRequest"
    })
  }
} satisfies Record<string, Client>

type ClientName = keyof typeof clients

/** One replayed call: the body fields after accessKey/streamName, and what the stream holds afterwards. */
interface Replay {
  readonly client: ClientName
  readonly call: string
  readonly type: WidgetType
  /** Body without the key and stream; `K` and `S` are filled in. Key order as the client sends it. */
  readonly body: (accessKey: string, stream: string) => Record<string, unknown>
  /** A point pushed first (for clears and list/table builders). */
  readonly before?: unknown
  readonly stored: ReadonlyArray<unknown>
  /** Expected ts of the stored entries, where the client sends timestamps. */
  readonly ts?: ReadonlyArray<number>
}

const py = (point: unknown) => (K: string, S: string) => ({ streamName: S, point, accessKey: K })
const rb = (point: unknown) => (K: string, S: string) => ({ accessKey: K, streamName: S, point })
const nd = (point: unknown) => (K: string, S: string) => ({ streamName: S, accessKey: K, point })

const replays: ReadonlyArray<Replay> = [
  // Python
  {
    client: "Python 1.5.0 (urllib2)",
    call: "pushNumber(s, 42)",
    type: "number",
    body: py({ number: 42 }),
    stored: [{ number: 42 }]
  },
  {
    client: "Python 1.5.0 (urllib2)",
    call: 'pushNumber(s, {"prefix": "$", "number": 4})',
    type: "number",
    body: py({ prefix: "$", number: 4 }),
    stored: [{ number: 4, prefix: "$" }]
  },
  {
    client: "Python 1.5.0 (urllib2)",
    call: "pushNumber(s, {number, timestamp})",
    type: "number",
    body: py({ number: 13, timestamp: 1329205474 }),
    stored: [{ number: 13 }],
    ts: [1329205474]
  },
  {
    client: "Python 1.5.0 (urllib2)",
    call: "pushNumber(s, [timestamped numbers]) to a sparkline",
    type: "sparkline",
    body: py([
      { number: 93, timestamp: 1329205474 },
      { number: 35, timestamp: 1329206474 }
    ]),
    stored: [{ number: 93 }, { number: 35 }],
    ts: [1329205474, 1329206474]
  },
  {
    client: "Python 1.5.0 (urllib2)",
    call: "pushNumber(s, {delta}) (pass-through dict)",
    type: "number",
    before: 10,
    body: py({ delta: 5 }),
    stored: [{ number: 10 }, { number: 15 }]
  },
  {
    client: "Python 1.5.0 (urllib2)",
    call: "pushGeo(s, 37.8, -122.6) (no color)",
    type: "usa-map",
    body: py({ latitude: 37.8, longitude: -122.6 }),
    stored: [{ latitude: 37.8, longitude: -122.6 }]
  },
  {
    client: "Python 1.5.0 (urllib2)",
    call: "pushGeo(s, [..], [..], ['blue', 'red'])",
    type: "world-map",
    body: py([
      { latitude: 37.8, longitude: -122.6, color: "blue" },
      { latitude: 12.3, longitude: 52, color: "red" }
    ]),
    stored: [
      { latitude: 37.8, longitude: -122.6, color: "blue" },
      { latitude: 12.3, longitude: 52, color: "red" }
    ]
  },
  {
    client: "Python 1.5.0 (urllib2)",
    call: "pushText(s, [t1, t2], [m1, m2], [u1, None]) with non-ASCII (\\u escapes)",
    type: "text-feed",
    body: py([
      { title: "Caf\u00e9", msg: "na\u00efve \u2713", imgUrl: "http://x.example/i.png" },
      { title: "t2", msg: "m2" }
    ]),
    stored: [
      { title: "Café", msg: "naïve ✓", imgUrl: "http://x.example/i.png" },
      { title: "t2", msg: "m2" }
    ]
  },
  {
    client: "Python 1.5.0 (urllib2)",
    call: "pushLeaderboard(s, arr)",
    type: "leaderboard",
    body: py({
      leaderboard: [
        { name: "Johnny", value: 84 },
        { name: "Lance", value: 62, prefix: "$" }
      ]
    }),
    stored: [
      {
        leaderboard: [
          { name: "Johnny", value: 84 },
          { name: "Lance", value: 62, prefix: "$" }
        ]
      }
    ]
  },
  {
    client: "Python 1.5.0 (urllib2)",
    call: 'pushList(s, ["a", "b"])',
    type: "list",
    body: py({ list: [{ listItem: "a" }, { listItem: "b" }] }),
    stored: [{ list: [{ listItem: "a" }, { listItem: "b" }] }]
  },
  {
    client: "Python 1.5.0 (urllib2)",
    call: "pushPair(s, [10, 23], [12, 90])",
    type: "xy-graph",
    body: py([
      { x: 10, y: 12 },
      { x: 23, y: 90 }
    ]),
    stored: [
      { x: 10, y: 12 },
      { x: 23, y: 90 }
    ]
  },
  {
    client: "Python 1.5.0 (urllib2)",
    call: "pushPair(s, 15, 8)",
    type: "xy-graph",
    body: py({ x: 15, y: 8 }),
    stored: [{ x: 15, y: 8 }]
  },
  {
    client: "Python 1.5.0 (urllib2)",
    call: "pushImage(s, url)",
    type: "image",
    body: py({ imgUrl: "https://x.example/a.png" }),
    stored: [{ imgUrl: "https://x.example/a.png" }]
  },
  {
    client: "Python 1.5.0 (urllib2)",
    call: 'pushLabel(s, "Uptime")',
    type: "label",
    body: py({ label: "Uptime" }),
    stored: [{ label: "Uptime" }]
  },
  {
    client: "Python 1.5.0 (urllib2)",
    call: "pushHtml(s, html)",
    type: "html",
    body: py({ html: "<b>x</b>" }),
    stored: [{ html: "<b>x</b>" }]
  },
  {
    client: "Python 1.5.0 (urllib2)",
    call: "pushTable(s, header, rows) with a number cell",
    type: "table",
    body: py({
      table: [
        ["name", "city", "goals"],
        ["Lionel", "Rosario", 91]
      ]
    }),
    stored: [
      {
        table: [
          ["name", "city", "goals"],
          ["Lionel", "Rosario", "91"]
        ]
      }
    ]
  },
  {
    client: "Python 1.5.0 (urllib2)",
    call: "clear(s)",
    type: "sparkline",
    before: 5,
    body: (K, S) => ({ streamName: S, command: "clear", accessKey: K }),
    stored: []
  },
  {
    client: "Python <= 1.3",
    call: "pushNumber(s, 42) with the trailing-slash URL",
    type: "number",
    body: py({ number: 42 }),
    stored: [{ number: 42 }]
  },

  // Ruby
  {
    client: "Ruby leftronicapi 1.3 (Net::HTTP)",
    call: "push_number(s, 14600) (bare number)",
    type: "number",
    body: rb(14600),
    stored: [{ number: 14600 }]
  },
  {
    client: "Ruby leftronicapi 1.3 (Net::HTTP)",
    call: 'push_number(s, {"number" => 5, "suffix" => "%"})',
    type: "dial",
    body: rb({ number: 5, suffix: "%" }),
    stored: [{ number: 5, suffix: "%" }]
  },
  {
    client: "Ruby leftronicapi 1.3 (Net::HTTP)",
    call: "push_geo(s, 37.8, -122.6) (color: null)",
    type: "usa-map",
    body: rb({ latitude: 37.8, longitude: -122.6, color: null }),
    stored: [{ latitude: 37.8, longitude: -122.6 }]
  },
  {
    client: "Ruby leftronicapi 1.3 (Net::HTTP)",
    call: "push_geo(s, 37.8, -122.6, :blue)",
    type: "usa-map",
    body: rb({ latitude: 37.8, longitude: -122.6, color: "blue" }),
    stored: [{ latitude: 37.8, longitude: -122.6, color: "blue" }]
  },
  {
    client: "Ruby leftronicapi 1.3 (Net::HTTP)",
    call: "push_text(s, title, msg) with raw UTF-8",
    type: "text-feed",
    body: rb({ title: "Grüße", msg: "日本 ✓" }),
    stored: [{ title: "Grüße", msg: "日本 ✓" }]
  },
  {
    client: "Ruby leftronicapi 1.3 (Net::HTTP)",
    call: "push_leaderboard(s, 'Johnny' => 84, 'Jamie' => 75)",
    type: "leaderboard",
    body: rb({
      leaderboard: [
        { name: "Johnny", value: 84 },
        { name: "Jamie", value: 75 }
      ]
    }),
    stored: [
      {
        leaderboard: [
          { name: "Johnny", value: 84 },
          { name: "Jamie", value: 75 }
        ]
      }
    ]
  },
  {
    client: "Ruby leftronicapi 1.3 (Net::HTTP)",
    call: "push_list(s, 'a', 'b')",
    type: "list",
    body: rb({ list: [{ listItem: "a" }, { listItem: "b" }] }),
    stored: [{ list: [{ listItem: "a" }, { listItem: "b" }] }]
  },
  {
    client: "Ruby leftronicapi 1.3 (Net::HTTP)",
    call: "push_table(s, header, rows)",
    type: "table",
    body: rb({
      table: [
        ["a", "b"],
        ["1", "2"]
      ]
    }),
    stored: [
      {
        table: [
          ["a", "b"],
          ["1", "2"]
        ]
      }
    ]
  },
  {
    client: "Ruby leftronicapi 1.3 (Net::HTTP)",
    call: "push_pair(s, [1, 2], [3, 4])",
    type: "xy-graph",
    body: rb([
      { x: 1, y: 3 },
      { x: 2, y: 4 }
    ]),
    stored: [
      { x: 1, y: 3 },
      { x: 2, y: 4 }
    ]
  },
  {
    client: "Ruby leftronicapi 1.3 (Net::HTTP)",
    call: "push_image / push_label / push_html",
    type: "image",
    body: rb({ imgUrl: "http://x.example/a.gif" }),
    stored: [{ imgUrl: "http://x.example/a.gif" }]
  },
  {
    client: "Ruby leftronicapi 1.3 (Net::HTTP)",
    call: 'clear("s")',
    type: "text-feed",
    before: { title: "T", msg: "M" },
    body: (K, S) => ({ accessKey: K, streamName: S, command: "clear" }),
    stored: []
  },

  // PHP
  {
    client: "PHP leftronic.php (libcurl)",
    call: "pushNumber(s, 14600)",
    type: "number",
    body: rb({ number: 14600 }),
    stored: [{ number: 14600 }]
  },
  {
    client: "PHP leftronic.php (libcurl)",
    call: 'pushNumber(s, "42") (numeric string)',
    type: "number",
    body: rb({ number: "42" }),
    stored: [{ number: 42 }]
  },
  ...[" 42", "42 ", "1e3", ".5", "42.", "-7.25"].map((s): Replay => ({
    client: "PHP leftronic.php (libcurl)",
    call: `pushNumber(s, ${JSON.stringify(s)}) (PHP is_numeric form)`,
    type: "number",
    body: rb({ number: s }),
    stored: [{ number: Number(s) }]
  })),
  {
    client: "PHP leftronic.php (libcurl)",
    call: "pushNumber(s, array('number' => 5, 'suffix' => '%'))",
    type: "horizontal-bar",
    body: rb({ number: 5, suffix: "%" }),
    stored: [{ number: 5, suffix: "%" }]
  },
  {
    client: "PHP leftronic.php (libcurl)",
    call: "pushGeo(s, 37.8, -122.6) (color: null)",
    type: "world-map",
    body: rb({ latitude: 37.8, longitude: -122.6, color: null }),
    stored: [{ latitude: 37.8, longitude: -122.6 }]
  },
  {
    client: "PHP leftronic.php (libcurl)",
    call: "pushText(s, title, msg) with \\u escapes",
    type: "text-feed",
    body: rb({ title: "Ré", msg: "€5" }),
    stored: [{ title: "Ré", msg: "€5" }]
  },
  {
    client: "PHP leftronic.php (libcurl)",
    call: "pushImage(s, url) with escaped slashes",
    type: "image",
    body: rb({ imgUrl: "http://x.example/i.png" }),
    stored: [{ imgUrl: "http://x.example/i.png" }]
  },
  {
    client: "PHP leftronic.php (libcurl)",
    call: "pushHtml(s, markup) with escaped slashes",
    type: "html",
    body: rb({ html: "<p>a</p><br/>" }),
    stored: [{ html: "<p>a</p><br/>" }]
  },
  {
    client: "PHP leftronic.php (libcurl)",
    call: "pushLeaderboard / pushList / pushTable",
    type: "list",
    body: rb({ list: [{ listItem: "a" }] }),
    stored: [{ list: [{ listItem: "a" }] }]
  },
  {
    client: "PHP leftronic.php (libcurl)",
    call: "pushPair(s, array(1), array(3)) (always an array)",
    type: "xy-graph",
    body: rb([{ x: 1, y: 3 }]),
    stored: [{ x: 1, y: 3 }]
  },
  {
    client: "PHP leftronic.php (libcurl)",
    call: "clear(s)",
    type: "world-map",
    before: { latitude: 1, longitude: 1 },
    body: (K, S) => ({ accessKey: K, streamName: S, command: "clear" }),
    stored: []
  },

  // Node
  {
    client: "Node leftronic 0.1.x",
    call: "pushNumber({number: 35, suffix: '%'})",
    type: "number",
    body: nd({ number: 35, suffix: "%" }),
    stored: [{ number: 35, suffix: "%" }]
  },
  {
    client: "Node leftronic 0.1.x",
    call: "pushNumber({number: [1, 2], timestamp: [..]})",
    type: "line-graph",
    body: nd([
      { number: 1, timestamp: 1329205474 },
      { number: 2, timestamp: 1329206474 }
    ]),
    stored: [{ number: 1 }, { number: 2 }],
    ts: [1329205474, 1329206474]
  },
  {
    client: "Node leftronic 0.1.x",
    call: "pushText({title, msg})",
    type: "text-feed",
    body: nd({ msg: "M", title: "T" }),
    stored: [{ title: "T", msg: "M" }]
  },
  {
    client: "Node leftronic 0.1.x",
    call: "pushGeo({latitude, longitude, color})",
    type: "usa-map",
    body: nd({ latitude: 40.7, longitude: -74, color: "purple" }),
    stored: [{ latitude: 40.7, longitude: -74, color: "purple" }]
  },
  {
    client: "Node leftronic 0.1.x",
    call: "pushTable({header, data})",
    type: "table",
    body: nd({ table: [["h1"], ["a"], ["b"]] }),
    stored: [{ table: [["h1"], ["a"], ["b"]] }]
  },
  {
    client: "Node leftronic 0.1.x",
    call: "sendClear(streamName)",
    type: "xy-graph",
    before: { x: 1, y: 1 },
    body: (K, S) => ({ streamName: S, accessKey: K, command: "clear" }),
    stored: []
  },

  // Java
  {
    client: "Java biz.neustar:leftronic (HttpClient 4.1)",
    call: 'sendNumber("s", 300) (bare integer)',
    type: "number",
    body: rb(300),
    stored: [{ number: 300 }]
  },
  {
    client: "Java biz.neustar:leftronic (HttpClient 4.1)",
    call: "sendGeoPoint(s, 45.8, -115.6)",
    type: "usa-map",
    body: rb({ latitude: 45.8, longitude: -115.6 }),
    stored: [{ latitude: 45.8, longitude: -115.6 }]
  },
  {
    client: "Java biz.neustar:leftronic (HttpClient 4.1)",
    call: 'sendText("s", "T", "M") (imgUrl: null)',
    type: "text-feed",
    body: rb({ title: "T", msg: "M", imgUrl: null }),
    stored: [{ title: "T", msg: "M" }]
  },
  {
    client: "Java biz.neustar:leftronic (HttpClient 4.1)",
    call: 'sendText("s", "T", "M", url)',
    type: "text-feed",
    body: rb({ title: "T", msg: "M", imgUrl: "http://x.example/i.ico" }),
    stored: [{ title: "T", msg: "M", imgUrl: "http://x.example/i.ico" }]
  },
  {
    client: "Java biz.neustar:leftronic (HttpClient 4.1)",
    call: "sendLeaderboard(s, entries)",
    type: "pie-chart",
    body: rb({ leaderboard: [{ name: "Ian", value: 12 }] }),
    stored: [{ leaderboard: [{ name: "Ian", value: 12 }] }]
  },
  {
    client: "Java biz.neustar:leftronic (HttpClient 4.1)",
    call: 'sendList("s", "Fe", "Fi")',
    type: "list",
    body: rb({ list: [{ listItem: "Fe" }, { listItem: "Fi" }] }),
    stored: [{ list: [{ listItem: "Fe" }, { listItem: "Fi" }] }]
  },
  {
    client: "Java biz.neustar:leftronic (HttpClient 4.1)",
    call: "kik postPoint(s, List<GraphPoint>) (Double number)",
    type: "sparkline",
    body: rb([{ timestamp: 1329205474, number: 40.0 }]),
    stored: [{ number: 40 }],
    ts: [1329205474]
  },
  {
    client: "Java biz.neustar:leftronic (HttpClient 4.1)",
    call: 'kik postCommand("s", "clear")',
    type: "sparkline",
    before: 1,
    body: (K, S) => ({ accessKey: K, streamName: S, command: "clear" }),
    stored: []
  },

  // Browser
  {
    client: "Browser jQuery $.post",
    call: "pushGeo (color undefined, dropped by JSON.stringify)",
    type: "world-map",
    body: rb({ latitude: 1, longitude: 2 }),
    stored: [{ latitude: 1, longitude: 2 }]
  }
]

/** Sends `body` exactly as `client` would, and checks the reply is what every client accepts. */
const replay = async (api: Api, client: ClientName, body: string): Promise<void> => {
  const c: Client = clients[client]
  const r = await nodeRequest(api.baseUrl, { method: "POST", path: c.path, headers: c.headers(body), body })
  // Java needs exactly 200; Node's callback only fires on body data; urllib2 must not be redirected.
  expect(r.status, r.text).toBe(200)
  expect(r.text.length).toBeGreaterThan(0)
  expect(JSON.parse(r.text)).toEqual({ message: "Success!" })
}

for (const backend of backends) {
  describe(suiteName("client compatibility", backend), () => {
    const ctx = useServer(backend)

    describe("exact request replays", () => {
      for (const r of replays) {
        it(`${r.client}: ${r.call}`, async () => {
          const { api } = ctx
          const { accessKey } = await api.setup({ s: r.type })
          if (r.before !== undefined) expectSuccess(await api.pushPoint(accessKey, "s", r.before))
          await replay(api, r.client, clients[r.client].encode(r.body(accessKey, "s")))
          const entries = await api.entries(accessKey, "s")
          expect(entries.map((e) => e.point)).toEqual(r.stored)
          if (r.ts !== undefined) expect(entries.map((e) => e.ts)).toEqual(r.ts)
        })
      }

      it("Python pushList(s, [1, 2]): list items that are numbers are accepted", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "list" })
        await replay(
          api,
          "Python 1.5.0 (urllib2)",
          pythonJson({ streamName: "s", point: { list: [{ listItem: 1 }, { listItem: 2 }] }, accessKey })
        )
        const latest = (await api.latest(accessKey, "s")) as { list: Array<{ listItem: unknown }> }
        expect(latest.list.map((i) => String(i.listItem))).toEqual(["1", "2"])
      })

      it("Python pushMultiple([populateNumber, populateGeo])", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ a: "number", b: "usa-map" })
        await replay(
          api,
          "Python 1.5.0 (urllib2)",
          pythonJson({
            accessKey,
            streams: [
              { streamName: "a", point: { number: 1 } },
              { streamName: "b", point: { latitude: 1.5, longitude: 2 } }
            ]
          })
        )
        expect(await api.points(accessKey, "a")).toEqual([{ number: 1 }])
        expect(await api.points(accessKey, "b")).toEqual([{ latitude: 1.5, longitude: 2 }])
      })

      it("Python setEncryptionKey + push (epoint): 400 invalid_request naming epoint", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        const body = pythonJson({ streamName: "s", epoint: "q83vEjRWeJA=:AAECAwQFBgcICQoLDA0ODw==", accessKey })
        const c = clients["Python 1.5.0 (urllib2)"]
        const r = await nodeRequest(api.baseUrl, { method: "POST", path: c.path, headers: c.headers(body), body })
        expect(r.status).toBe(400)
        const json = JSON.parse(r.text)
        expect(json.error.code).toBe("invalid_request")
        expect(json.error.message).toMatch(/epoint/i)
        expect(await api.entries(accessKey, "s")).toEqual([])
      })

      it("Python float('nan') goes out as the bare NaN token: 400, nothing stored", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        const body = `{"streamName": "s", "point": {"number": NaN}, "accessKey": ${JSON.stringify(accessKey)}}`
        const c = clients["Python 1.5.0 (urllib2)"]
        const r = await nodeRequest(api.baseUrl, { method: "POST", path: c.path, headers: c.headers(body), body })
        expect(r.status).toBe(400)
        expect(JSON.parse(r.text).error.code).toBe("invalid_json")
        expect(await api.entries(accessKey, "s")).toEqual([])
      })

      it("PHP with Expect: 100-continue (large body) gets 100 Continue, then 200", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "html" })
        const html = "<p>" + "x".repeat(4000) + "</p>"
        const body = phpJson({ accessKey, streamName: "s", point: { html } })
        const c = clients["PHP leftronic.php (libcurl)"]
        const r = await nodeRequest(api.baseUrl, {
          method: "POST",
          path: c.path,
          headers: { ...c.headers(body), Expect: "100-continue" },
          body,
          expectContinue: true
        })
        expect(r.status, r.text).toBe(200)
        expect(r.continued, "server answered 100 Continue").toBe(true)
        expect(await api.points(accessKey, "s")).toEqual([{ html }])
      })

      it("Node keep-alive: two pushes pipelined on one connection are both stored", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        const request = (n: number) => {
          const body = JSON.stringify({ streamName: "s", accessKey, point: { number: n } })
          return (
            `POST /customSend HTTP/1.1\r\nHost: www.leftronic.com\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
            `Content-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n${body}`
          )
        }
        const closing = request(2).replace("Connection: keep-alive", "Connection: close")
        const { received } = await rawExchange(api.baseUrl, Buffer.from(request(1) + closing))
        expect(received.match(/HTTP\/1\.1 200/g)).toHaveLength(2)
        expect(await api.points(accessKey, "s")).toEqual([{ number: 1 }, { number: 2 }])
      })
    })

    describe("HTTP framing errors", () => {
      /** The Node client's request for non-ASCII text: Content-Length counts UTF-16 units, so it is too short. */
      const nodeNonAscii = (accessKey: string, stream: string) => {
        const json = JSON.stringify({ streamName: stream, accessKey, point: { title: "T", msg: "café ✓" } })
        const body = Buffer.from(json)
        expect(body.length).toBeGreaterThan(json.length)
        const head =
          `POST /customSend HTTP/1.1\r\nHost: www.leftronic.com\r\n` +
          `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${json.length}\r\nConnection: keep-alive\r\n\r\n`
        return Buffer.concat([Buffer.from(head), body])
      }

      it("a body longer than its Content-Length: answered 4xx and closed, nothing stored", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "text-feed" })
        const { received, closedByServer } = await rawExchange(api.baseUrl, nodeNonAscii(accessKey, "s"))
        expect(received).toMatch(/^HTTP\/1\.[01] 4\d\d/)
        expect(received).not.toMatch(/HTTP\/1\.[01] 200/)
        expect(closedByServer, "server closed the connection").toBe(true)
        expect(await api.entries(accessKey, "s")).toEqual([])
      })

      it("excess bytes that look like garbage: nothing stored, the connection is closed", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "label" })
        const json = JSON.stringify({ accessKey, streamName: "s", point: { label: "x" } })
        const declared = json.length - 5
        const bytes = Buffer.from(
          `POST /customSend/ HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n${json}` +
            "\u0000\u0001 garbage".repeat(500)
        )
        const { received, closedByServer } = await rawExchange(api.baseUrl, bytes)
        expect(received).toMatch(/^HTTP\/1\.[01] 4\d\d/)
        expect(closedByServer).toBe(true)
        expect(await api.entries(accessKey, "s")).toEqual([])
      })

      it("does not disturb other requests, during or after", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ bad: "text-feed", good: "number" })
        const bad = Array.from({ length: 10 }, () => rawExchange(api.baseUrl, nodeNonAscii(accessKey, "bad")))
        const good = Array.from({ length: 20 }, (_, i) => api.pushPoint(accessKey, "good", { number: i }))
        const [badResults, goodResults] = await Promise.all([Promise.all(bad), Promise.all(good)])
        for (const r of goodResults) expectSuccess(r)
        for (const r of badResults) expect(r.received).toMatch(/^HTTP\/1\.[01] 4\d\d/)
        expect(await api.entries(accessKey, "bad")).toEqual([])
        expect(await api.entries(accessKey, "good")).toHaveLength(20)
        expectSuccess(await api.pushPoint(accessKey, "good", 99))
        expect(await api.latest(accessKey, "good")).toEqual({ number: 99 })
      })
    })
  })
}
