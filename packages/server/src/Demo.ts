import {
  AccountStore,
  CreateDashboardBody,
  type Dashboard,
  Dashboards,
  DashboardStore,
  defaultLimits,
  type Limits,
  StreamStore,
  type TileOptionsData,
  UseCases,
  type WidgetType
} from "@dashstream/core"
import { Effect, Either, Schema } from "effect"
import { CommandFailed } from "./Errors.js"

/**
 * `serve --demo` (docs/api.md section 8.5): an account "demo" with a dozen widgets of different types, a dashboard
 * "Demo" laid out for them, and a feed that pushes plausible live data to them every few seconds while `serve` runs.
 *
 * The account is made once, on the first start with `--demo`, and found again by its name on later starts; a demo
 * widget the operator deleted is declared again, a dashboard "Demo" the operator deleted is made again, and an
 * edited one is kept as it is. Data goes through the ordinary push use case (`UseCases.pushPoint`), so it is stored,
 * decimated and sent to open pages exactly as a client's push would be.
 */

/** The name of the demo account. */
export const DEMO_ACCOUNT = "demo"

/** The name of the demo dashboard. */
export const DEMO_DASHBOARD = "Demo"

/** How often the feed pushes, in milliseconds. */
export const DEMO_INTERVAL_MS = 3_000

/**
 * A widget of the demo: its stream name (also its tile's title) and type, and its tile on the 12-column grid, with
 * the tile's options (docs/api.md section 15) if any.
 */
export interface DemoWidget {
  readonly streamName: string
  readonly type: WidgetType
  readonly x: number
  readonly y: number
  readonly w: number
  readonly h: number
  readonly options?: TileOptionsData
}

const percent: TileOptionsData = { min: 0, max: 100 }

/**
 * The demo's widgets in the order they are declared, with their tiles: three bands that fill the 12 columns, numbers
 * and gauges on top, charts and lists in the middle, the map and the status at the bottom.
 */
export const demoWidgets: ReadonlyArray<DemoWidget> = [
  { streamName: "Revenue today", type: "number", x: 0, y: 0, w: 3, h: 2 },
  {
    streamName: "CPU load",
    type: "dial",
    x: 3,
    y: 0,
    w: 2,
    h: 2,
    options: { ...percent, thresholds: [{ above: 80, color: "red" }] }
  },
  { streamName: "Active users", type: "line-graph", x: 5, y: 0, w: 4, h: 2 },
  { streamName: "Requests per second", type: "sparkline", x: 9, y: 0, w: 3, h: 2 },
  { streamName: "Top sellers", type: "leaderboard", x: 0, y: 2, w: 3, h: 3 },
  { streamName: "Traffic sources", type: "pie-chart", x: 3, y: 2, w: 3, h: 3 },
  { streamName: "Signups this week", type: "bar-chart", x: 6, y: 2, w: 3, h: 3 },
  { streamName: "Deploys", type: "text-feed", x: 9, y: 2, w: 3, h: 3 },
  {
    streamName: "Disk used",
    type: "horizontal-bar",
    x: 0,
    y: 5,
    w: 3,
    h: 2,
    options: { ...percent, thresholds: [{ above: 75, color: "amber" }] }
  },
  { streamName: "Status", type: "label", x: 3, y: 5, w: 2, h: 2 },
  { streamName: "Latest orders", type: "list", x: 5, y: 5, w: 3, h: 2 },
  { streamName: "Visitors", type: "world-map", x: 8, y: 5, w: 4, h: 2 }
]

/** What {@link prepare} found or made. */
export interface DemoSetup {
  readonly accountId: string
  /** The demo widgets whose stream exists with the demo's type (the feed pushes to these only). */
  readonly widgets: ReadonlyArray<DemoWidget>
  /**
   * The demo dashboard's view token, to print as its link: the one it keeps, or one made now (dashboard created, or a
   * dashboard from before view tokens were kept given a new one); `undefined` when none can be shown.
   */
  readonly viewToken: string | undefined
  /** True when `viewToken` replaced the dashboard's earlier token (the demo's link from an earlier start stopped working). */
  readonly renewed: boolean
  /** True when the account was made by this start; false when an earlier start had made it. */
  readonly created: boolean
}

const failed = (what: string) => (cause: unknown) =>
  new CommandFailed({ message: `could not ${what} for --demo: ${messageOf(cause)}`, cause })

const messageOf = (cause: unknown): string =>
  typeof cause === "object" && cause !== null && "message" in cause && typeof cause.message === "string"
    ? cause.message
    : String(cause)

/**
 * Finds the demo account (the oldest account named {@link DEMO_ACCOUNT}) or makes it, declares the demo widgets it
 * lacks and the dashboard {@link DEMO_DASHBOARD} if it has none. An existing dashboard's link is the one it keeps
 * (a share link, docs/api.md section 11); only a dashboard made before view tokens were kept has none to show, and with
 * `rotate` it gets a new one (its old link stops working). Fails with {@link CommandFailed} when the storage fails.
 */
export const prepare = (
  rotate: boolean
): Effect.Effect<DemoSetup, CommandFailed, AccountStore | DashboardStore | StreamStore> =>
  Effect.gen(function* () {
    const accounts = yield* UseCases.listAccounts.pipe(Effect.mapError(failed("read the accounts")))
    const found = accounts.find((account) => account.name === DEMO_ACCOUNT)
    const accountId =
      found?.id ?? (yield* UseCases.createAccount(DEMO_ACCOUNT).pipe(Effect.mapError(failed("create the account")))).id
    const existing = new Map(
      (yield* UseCases.listWidgets(accountId).pipe(Effect.mapError(failed("read the widgets")))).map((w) => [
        w.streamName as string,
        w.type
      ])
    )
    for (const widget of demoWidgets) {
      if (existing.has(widget.streamName)) continue
      yield* UseCases.createWidget(accountId, widget.streamName, widget.type).pipe(
        Effect.mapError(failed(`declare the widget ${JSON.stringify(widget.streamName)}`))
      )
      existing.set(widget.streamName, widget.type)
    }
    // A demo stream the operator replaced by a widget of another type is left alone.
    const widgets = demoWidgets.filter((widget) => existing.get(widget.streamName) === widget.type)
    if (found === undefined) yield* backfill(accountId, widgets)
    const dashboards = yield* Dashboards.views.list(accountId).pipe(Effect.mapError(failed("read the dashboards")))
    const dashboard = dashboards.find((d: Dashboard) => d.name === DEMO_DASHBOARD)
    let viewToken: string | undefined
    let renewed = false
    if (dashboard === undefined) {
      const body = Either.getOrThrow(
        Schema.decodeUnknownEither(CreateDashboardBody)({
          name: DEMO_DASHBOARD,
          tiles: widgets.map(({ streamName, x, y, w, h, options }) => ({
            streamName,
            x,
            y,
            w,
            h,
            ...(options === undefined ? {} : { options })
          }))
        })
      )
      viewToken = (yield* Dashboards.createDashboard(accountId, body).pipe(
        Effect.mapError(failed("create the dashboard"))
      )).viewToken
    } else if (dashboard.viewToken !== null) {
      viewToken = dashboard.viewToken
    } else if (rotate) {
      viewToken = (yield* Dashboards.views
        .rotateToken(accountId, dashboard.id)
        .pipe(Effect.mapError(failed("give the dashboard a new view link")))).viewToken
      renewed = true
    }
    return { accountId, widgets, viewToken, renewed, created: found === undefined }
  })

/**
 * The line `serve --demo` prints after the console line: `Demo dashboard: <base>/d/<viewToken>`, with a note when the
 * link replaces the one an earlier start printed (`renewed`, see {@link DemoSetup}). `base` is the server's URL with
 * its base path.
 */
export const demoLine = (base: string, viewToken: string, renewed: boolean): string => {
  const url = `${base}/d/${encodeURIComponent(viewToken)}`
  return renewed
    ? `Demo dashboard: ${url} (a new link: the demo's link from an earlier start no longer works)`
    : `Demo dashboard: ${url}`
}

// ---------------------------------------------------------------------------------------------------------------
// The feed
// ---------------------------------------------------------------------------------------------------------------

/** A source of random numbers in [0, 1): `Math.random` in the server, a seeded one in tests. */
export type Random = () => number

const products = ["Espresso", "Flat white", "Cold brew", "Chai latte", "Matcha"]
const sources = ["Search", "Direct", "Social", "Email"]
const days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
const services = ["api", "web", "worker", "billing"]
const cities: ReadonlyArray<readonly [string, number, number]> = [
  ["London", 51.51, -0.13],
  ["New York", 40.71, -74.01],
  ["Tokyo", 35.68, 139.69],
  ["São Paulo", -23.55, -46.63],
  ["Sydney", -33.87, 151.21],
  ["Nairobi", -1.29, 36.82],
  ["Berlin", 52.52, 13.4],
  ["Mumbai", 19.08, 72.88]
]
const colors = ["blue", "green", "purple", "yellow", "red"] as const
const statuses = ["All systems normal", "All systems normal", "All systems normal", "Deploy in progress"]

/**
 * The demo's data generator: each call of the returned function gives the points of one tick, by stream name, for
 * the time `now` (UNIX seconds). Numbers wander within plausible ranges; lists, boards and charts change a little
 * each tick; the feed and the map get an item every few ticks. Pure but for `random`.
 */
export const demoFeed = (random: Random = Math.random) => {
  const around = (value: number, step: number, min: number, max: number) =>
    Math.min(max, Math.max(min, value + (random() * 2 - 1) * step))
  const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!
  let cpu = 35
  let rps = 820
  let disk = 61
  let tick = 0
  let order = 1040
  const sellers = new Map(products.map((name, i) => [name, 40 - i * 6]))
  const traffic = new Map(sources.map((name, i) => [name, 40 - i * 8]))
  // A whole day's signups for each weekday; today's bar rises towards its day's total as the UTC day goes by.
  const signups = days.map(() => 300 + Math.round(random() * 300))
  let today = -1
  const orders: Array<string> = []
  let version = 7
  return (now: number): ReadonlyArray<readonly [string, unknown]> => {
    tick++
    const secondOfDay = now % 86_400
    const day = (Math.floor(now / 86_400) + 3) % 7
    cpu = around(cpu, 8, 5, 95)
    rps = around(rps, 60, 300, 1600)
    disk = disk >= 80 ? 61 : disk + random() * 0.05
    // Sales are the day's: they start again at UTC midnight, as revenue does.
    if (day !== today) for (const [i, name] of products.entries()) sellers.set(name, 40 - i * 6)
    today = day
    const top = pick(products)
    if (random() < 0.3) sellers.set(top, sellers.get(top)! + 1)
    for (const source of sources) traffic.set(source, Math.max(1, around(traffic.get(source)!, 2, 1, 80)))
    const signupsSoFar = (i: number) => (i < day ? signups[i]! : Math.round((signups[i]! * secondOfDay) / 86_400))
    // The list is full from the first tick: the orders of the ticks before it too.
    do {
      order++
      orders.unshift(`Order ${order}: ${pick(products)}, $${(4 + random() * 20).toFixed(2)}`)
    } while (orders.length < 6)
    orders.length = 6
    const points: Array<readonly [string, unknown]> = [
      // Grows through the UTC day from 0 at midnight: about $30,000 by its end.
      ["Revenue today", { number: Math.round(secondOfDay * 35) / 100, prefix: "$" }],
      ["CPU load", { number: Math.round(cpu), suffix: "%" }],
      ["Active users", { number: Math.round(900 + 400 * Math.sin((2 * Math.PI * now) / 900) + random() * 40) }],
      ["Requests per second", { number: Math.round(rps) }],
      [
        "Top sellers",
        {
          leaderboard: [...sellers].sort((a, b) => b[1] - a[1]).map(([name, value]) => ({ name, value }))
        }
      ],
      ["Traffic sources", { leaderboard: [...traffic].map(([name, value]) => ({ name, value: Math.round(value) })) }],
      ["Signups this week", { chart: days.map((name, i) => ({ name, value: i <= day ? signupsSoFar(i) : 0 })) }],
      ["Disk used", { number: Math.round(disk * 10) / 10, suffix: "%" }],
      ["Latest orders", { list: orders.map((listItem) => ({ listItem })) }],
      ["Status", { label: tick % 20 < 17 ? statuses[0] : pick(statuses) }]
    ]
    if (tick % 5 === 1) {
      version++
      points.push([
        "Deploys",
        {
          title: `${pick(services)} 2.${version}.0 deployed`,
          msg: `${2 + Math.floor(random() * 8)} changes, checks green`
        }
      ])
    }
    if (tick % 2 === 1) {
      const [title, latitude, longitude] = pick(cities)
      points.push(["Visitors", { latitude, longitude, title, color: pick(colors) }])
    }
    return points
  }
}

/** Pushes one point of the demo through the ordinary push use case; a refused point is logged, never fatal. */
const pushOne = (accountId: string, streamName: string, point: unknown, limits: Limits) =>
  UseCases.pushPoint(accountId, streamName, point, limits).pipe(
    Effect.catchAll((error) =>
      Effect.logWarning(`demo: the point for ${JSON.stringify(streamName)} was not stored`, error)
    )
  )

/** The streams {@link backfill} gives a history: series with timestamps, events as the last few of them. */
const series = new Set(["Active users", "Requests per second"])
const events = new Set(["Deploys", "Visitors"])

/**
 * Gives the new demo's charts an hour of history (one point a minute, with timestamps) and its feed and map their
 * last few items, so that the dashboard is not empty on the first start.
 */
const backfill = (accountId: string, widgets: ReadonlyArray<DemoWidget>) =>
  Effect.gen(function* () {
    const now = Math.floor(Date.now() / 1000)
    const feed = demoFeed()
    const history = new Map<string, Array<unknown>>()
    for (let minute = 60; minute >= 1; minute--) {
      const at = now - minute * 60
      for (const [streamName, point] of feed(at)) {
        if (!series.has(streamName) && !events.has(streamName)) continue
        const stamped = series.has(streamName) ? { ...(point as object), timestamp: at } : point
        history.set(streamName, [...(history.get(streamName) ?? []), stamped])
      }
    }
    for (const [streamName, points] of history) {
      if (!widgets.some((w) => w.streamName === streamName)) continue
      yield* pushOne(accountId, streamName, events.has(streamName) ? points.slice(-4) : points, defaultLimits)
    }
  })

/**
 * Pushes a tick of {@link demoFeed} to the demo's `widgets` every {@link DEMO_INTERVAL_MS}, first at once, until
 * interrupted. Each point goes through `UseCases.pushPoint` as a push with the account's key would.
 */
export const feed = (
  setup: DemoSetup,
  limits: Limits = defaultLimits
): Effect.Effect<never, never, AccountStore | StreamStore> => {
  const next = demoFeed()
  const shown = new Set(setup.widgets.map((w) => w.streamName))
  const tick = Effect.suspend(() =>
    Effect.forEach(
      next(Date.now() / 1000).filter(([streamName]) => shown.has(streamName)),
      ([streamName, point]) => pushOne(setup.accountId, streamName, point, limits),
      { discard: true }
    )
  )
  return Effect.zipRight(
    Effect.logInfo(`demo: pushing to ${setup.widgets.length} widgets every ${DEMO_INTERVAL_MS / 1000} seconds`),
    Effect.forever(Effect.zipRight(tick, Effect.sleep(DEMO_INTERVAL_MS)))
  )
}
