import type { Entry, TileModel, WidgetType } from "../../src/index.js"

/**
 * A 20-tile dashboard, one tile per widget type, laid out on 6 rows of the 12-column grid (the screenshot in
 * `docs/dashboard.png`), and the entries each tile starts with.
 */
const tile = (
  type: WidgetType,
  streamName: string,
  x: number,
  y: number,
  w: number,
  h: number,
  title?: string
): TileModel => ({
  streamName,
  type,
  x,
  y,
  w,
  h,
  deleted: false,
  ...(title === undefined ? {} : { title })
})

export const tiles: ReadonlyArray<TileModel> = [
  tile("number", "revenue", 0, 0, 2, 1, "Revenue today"),
  tile("horizontal-bar", "cpu", 0, 1, 2, 1, "CPU"),
  tile("dial", "satisfaction", 2, 0, 2, 2, "Satisfaction"),
  tile("line-graph", "requests", 4, 0, 4, 2, "Requests per minute"),
  tile("sparkline", "signups", 8, 0, 2, 1, "Signups"),
  tile("vertical-bar", "queue", 8, 1, 2, 1, "Queue depth"),
  tile("label", "status", 10, 0, 2, 1, "Status"),
  tile("image", "chart-of-the-day", 10, 1, 2, 1, "Chart of the day"),
  tile("world-map", "visitors", 0, 2, 3, 2, "Visitors"),
  tile("usa-map", "stores", 3, 2, 3, 2, "Store openings"),
  tile("leaderboard", "top-sellers", 6, 2, 2, 2, "Top sellers"),
  tile("pie-chart", "browsers", 8, 2, 2, 2, "Browsers"),
  tile("bar-chart", "regions", 10, 2, 2, 2, "Sales by region"),
  tile("text-feed", "deploys", 0, 4, 3, 2, "Deploys"),
  tile("table", "incidents", 3, 4, 3, 2, "Incidents"),
  tile("multi-bar-graph", "quarters", 6, 4, 2, 2, "Quarterly revenue"),
  tile("xy-graph", "latency", 8, 4, 2, 1, "Latency vs load"),
  tile("list", "todo", 8, 5, 2, 1, "On call"),
  tile("gallery", "team", 10, 4, 2, 1, "Team photo"),
  tile("html", "notice", 10, 5, 2, 1, "Notice")
]

const t0 = 1_700_000_000

/** The entries of every tile (ascending `ts`), given the test server's origin for image URLs. */
export const entries = (origin: string): Record<string, ReadonlyArray<Entry>> => {
  const img = (name: string) => `${origin}/img/${name}.svg`
  const series = (n: number, f: (i: number) => number, step: number) =>
    Array.from({ length: n }, (_, i) => ({ ts: t0 + i * step, point: { number: Math.round(f(i) * 10) / 10 } }))
  const events = (points: ReadonlyArray<unknown>) => points.map((point, i) => ({ ts: t0 + i, point }))
  return {
    revenue: [
      { ts: t0, point: { number: 1200, prefix: "$" } },
      { ts: t0 + 60, point: { number: 1284.5, prefix: "$" } }
    ],
    cpu: [{ ts: t0, point: { number: 72, suffix: "%" } }],
    satisfaction: [{ ts: t0, point: { number: 87, suffix: "%" } }],
    requests: series(40, (i) => 420 + 120 * Math.sin(i / 5) + 4 * i, 60),
    signups: series(24, (i) => 30 + 12 * Math.sin(i / 3) + i, 3600),
    queue: [{ ts: t0, point: { number: 340 } }],
    status: [{ ts: t0, point: { label: "All systems go" } }],
    "chart-of-the-day": [{ ts: t0, point: { imgUrl: img("chart") } }],
    visitors: events([
      { latitude: 51.5, longitude: -0.12, title: "London" },
      { latitude: 35.7, longitude: 139.7, color: "blue", title: "Tokyo" },
      { latitude: -33.9, longitude: 151.2, color: "green", title: "Sydney" },
      { latitude: -23.5, longitude: -46.6, color: "yellow", title: "São Paulo" },
      { latitude: -1.3, longitude: 36.8, color: "purple", title: "Nairobi" }
    ]),
    stores: events([
      { latitude: 40.7, longitude: -74, color: "blue", title: "New York" },
      { latitude: 37.8, longitude: -122.4, color: "green", title: "San Francisco" },
      { latitude: 41.9, longitude: -87.6, title: "Chicago" },
      { latitude: 61.2, longitude: -149.9, color: "purple", title: "Anchorage" },
      { latitude: 21.3, longitude: -157.9, color: "yellow", title: "Honolulu" }
    ]),
    "top-sellers": [
      {
        ts: t0,
        point: {
          leaderboard: [
            { name: "Ann", value: 1280, prefix: "$" },
            { name: "Bob", value: 990, prefix: "$" },
            { name: "Chloé", value: 875, prefix: "$" },
            { name: "Dmitri", value: 640, prefix: "$" },
            { name: "Eve", value: 410, prefix: "$" }
          ]
        }
      }
    ],
    browsers: [
      {
        ts: t0,
        point: {
          leaderboard: [
            { name: "Chrome", value: 61 },
            { name: "Safari", value: 21 },
            { name: "Firefox", value: 9 },
            { name: "Edge", value: 9 }
          ]
        }
      }
    ],
    regions: [
      {
        ts: t0,
        point: {
          chart: [
            { name: "EMEA", value: 42, color: "blue" },
            { name: "APAC", value: 31, color: "green" },
            { name: "AMER", value: 55, color: "purple" },
            { name: "LATAM", value: 18, color: "yellow" }
          ]
        }
      }
    ],
    deploys: events([
      { title: "api", msg: "v2.3.0 rolled back", imgUrl: img("api"), date: "09:12" },
      { title: "web", msg: "v1.8.2 is live on all regions", imgUrl: img("web"), date: "10:47" },
      { title: "worker", msg: "v5.0.1 canary at 10%", imgUrl: img("worker"), date: "11:05" }
    ]),
    incidents: [
      {
        ts: t0,
        point: {
          table: [
            ["Service", "Status", "Since"],
            ["Checkout", "Degraded", "10:02"],
            ["Search", "OK", "08:15"],
            ["Payments", "OK", "07:40"],
            ["Email", "Maintenance", "06:00"]
          ]
        }
      }
    ],
    quarters: [
      {
        ts: t0,
        point: {
          matrix: [
            ["", "2023", "2024", "2025"],
            ["Q1", 3, 5, 6],
            ["Q2", 4, 6, 7],
            ["Q3", 5, 6, 9],
            ["Q4", 6, 8, 10]
          ]
        }
      }
    ],
    latency: events(
      Array.from({ length: 25 }, (_, i) => ({
        x: 10 + i * 4,
        y: Math.round((20 + 0.02 * (i * 4) ** 2 + (i % 3) * 6) * 10) / 10
      }))
    ),
    todo: [
      {
        ts: t0,
        point: {
          list: [{ listItem: "Ann (primary)" }, { listItem: "Bob (secondary)" }, { listItem: "Chloé (manager)" }]
        }
      }
    ],
    team: events([{ title: "Offsite 2025", msg: "Lisbon", imgUrl: img("team") }]),
    notice: [{ ts: t0, point: { html: "<b>Maintenance</b> on <i>Saturday</i> 02:00&ndash;04:00 UTC" } }]
  }
}
