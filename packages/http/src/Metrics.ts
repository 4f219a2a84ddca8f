import type { IncomingMessage, ServerResponse } from "node:http"
import type { WriteObserver } from "@dashstream/core"
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client"

/**
 * Dashstream's Prometheus metrics (docs/api.md section 12), served as text at `GET /metrics`.
 *
 * Names follow Prometheus conventions: base units (seconds, bytes), `_total` on counters, a `dashstream_` prefix on
 * Dashstream's own and the standard `process_*` and `nodejs_*` metrics of `prom-client`. No label ever carries an
 * access key, view token, stream or account name: a request is labelled with its route template
 * (`/api/v2/:accessKey/datastream/:streamName`), never its URL, and with its method and status.
 *
 * One instance per server (each has its own registry, so several servers in one process do not mix their figures).
 * Its recording methods are plain synchronous calls, cheap enough for the push path; everything is computed into
 * text only when `/metrics` is scraped.
 *
 * For the live event stream lane (docs/api.md section 10): call {@link Metrics.eventStreamOpened} when an event stream
 * starts (after its 200 is decided), {@link Metrics.eventStreamClosed} exactly once when it ends for any reason,
 * and {@link Metrics.eventsSent} with the number of events written to it (entries, clears, deletions; not pings).
 */

/** The label of a request that matched no route (a 404): never the URL itself. */
export const unmatchedRoute = "unmatched"

/** The route label of the push lane: `POST /customSend` and `POST /customSend/`. */
export const pushRoute = "/customSend"

/** Request duration buckets, in seconds: 1 ms to 10 s. */
const durationBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]

/** Group-commit size buckets, in `write` calls per group (one push is one call; a group holds at most 1,000). */
const groupBuckets = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]

/** What {@link Metrics.decimationPass} records of a pass (the `PassResult` of `@dashstream/decimation`). */
export interface DecimationPassFigures {
  /** Entries read by the pass. */
  readonly entriesExamined: number
  /** Entries it deleted. */
  readonly entriesRemoved: number
  /** Its wall-clock duration, in milliseconds. */
  readonly durationMs: number
}

/**
 * The requests of one route, method and status: their count, the sum of their durations and how many fell in each
 * bucket of {@link durationBuckets} (not cumulative; the last slot is above every bucket). Kept as plain numbers,
 * so counting a request costs a few additions; the text is written only when scraped.
 */
class RequestSeries {
  count = 0
  sum = 0
  readonly buckets = new Float64Array(durationBuckets.length + 1)
  readonly labels: string
  constructor(
    readonly route: string,
    readonly method: string,
    readonly status: number
  ) {
    this.labels = `route="${escapeLabel(route)}",method="${escapeLabel(method)}",status="${status}"`
  }
  observe(seconds: number): void {
    this.count++
    this.sum += seconds
    let i = 0
    while (i < durationBuckets.length && seconds > durationBuckets[i]!) i++
    this.buckets[i]!++
  }
}

const escapeLabel = (value: string): string =>
  value.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll('"', '\\"')

const requestsHelp = "HTTP requests answered, by route template, method and status"
const durationHelp = "Time from receiving an HTTP request to finishing its answer, by route template, method and status"

/** The two request families in the text format: `dashstream_http_requests_total` and its duration histogram. */
const requestText = (series: Iterable<RequestSeries>): string => {
  const counts = [
    "# HELP dashstream_http_requests_total " + requestsHelp,
    "# TYPE dashstream_http_requests_total counter"
  ]
  const durations = [
    "# HELP dashstream_http_request_duration_seconds " + durationHelp,
    "# TYPE dashstream_http_request_duration_seconds histogram"
  ]
  for (const s of series) {
    counts.push(`dashstream_http_requests_total{${s.labels}} ${s.count}`)
    let cumulative = 0
    for (let i = 0; i < durationBuckets.length; i++) {
      cumulative += s.buckets[i]!
      durations.push(
        `dashstream_http_request_duration_seconds_bucket{${s.labels},le="${durationBuckets[i]}"} ${cumulative}`
      )
    }
    durations.push(`dashstream_http_request_duration_seconds_bucket{${s.labels},le="+Inf"} ${s.count}`)
    durations.push(`dashstream_http_request_duration_seconds_sum{${s.labels}} ${s.sum}`)
    durations.push(`dashstream_http_request_duration_seconds_count{${s.labels}} ${s.count}`)
  }
  return `${counts.join("\n")}\n\n${durations.join("\n")}\n`
}

/** The request families as prom-client JSON metrics (see {@link MetricsSnapshot}), so that processes can be summed. */
const requestJson = (series: Iterable<RequestSeries>): MetricsSnapshot => {
  const counts: Array<MetricJsonValue> = []
  const durations: Array<MetricJsonValue> = []
  const name = "dashstream_http_request_duration_seconds"
  for (const s of series) {
    const labels = { route: s.route, method: s.method, status: s.status }
    counts.push({ labels, value: s.count })
    let cumulative = 0
    for (let i = 0; i < durationBuckets.length; i++) {
      cumulative += s.buckets[i]!
      durations.push({
        metricName: `${name}_bucket`,
        labels: { ...labels, le: durationBuckets[i]! },
        value: cumulative
      })
    }
    durations.push({ metricName: `${name}_bucket`, labels: { ...labels, le: "+Inf" }, value: s.count })
    durations.push({ metricName: `${name}_sum`, labels, value: s.sum })
    durations.push({ metricName: `${name}_count`, labels, value: s.count })
  }
  return [
    {
      name: "dashstream_http_requests_total",
      help: requestsHelp,
      type: "counter",
      aggregator: "sum",
      values: counts
    },
    { name, help: durationHelp, type: "histogram", aggregator: "sum", values: durations }
  ]
}

/**
 * One process's metrics as prom-client's JSON (`Registry.getMetricsAsJSON()`), the request families included: what
 * a `serve --workers N` worker sends for the server's `/metrics`, where the snapshots of every worker are summed
 * (see {@link Metrics.render}).
 */
export type MetricsSnapshot = ReadonlyArray<MetricJson>

/** One metric of a {@link MetricsSnapshot}: prom-client's JSON form (plain data, safe to send between processes). */
export interface MetricJson {
  readonly name: string
  readonly help: string
  /** `counter`, `gauge`, `histogram` or `summary`. */
  readonly type: string
  /** How prom-client sums it over processes (`sum`, `first`, `omit`, ...). */
  readonly aggregator: string
  readonly values: ReadonlyArray<MetricJsonValue>
}

/** One sample of a {@link MetricJson}: a histogram's samples name their series (`_bucket`, `_sum`, `_count`). */
export interface MetricJsonValue {
  readonly value: number
  readonly labels: Readonly<Record<string, string | number>>
  readonly metricName?: string
}

/** Where `/metrics` gets the snapshots of the server's other processes (`serve --workers N`). */
export type OtherProcesses = () => Promise<ReadonlyArray<MetricsSnapshot>>

/** A counter of `registry`: its name, help text and label names (none: one unlabelled series). */
const counter = <L extends string = never>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: ReadonlyArray<L> = []
): Counter<L> => new Counter({ name, help, labelNames, registers: [registry] })

/** An unlabelled gauge of `registry`. */
const gauge = (registry: Registry, name: string, help: string): Gauge =>
  new Gauge({ name, help, registers: [registry] })

/** The registry of one server's metrics and the functions that record them. */
export class Metrics {
  // Every metric but the request families (see `requestText`), default process metrics included.
  private readonly registry = new Registry()
  // The request series by `route method status`; the ingest lane's also by route, then status.
  private readonly requestSeries = new Map<string, RequestSeries>()
  private readonly ingestSeries = new Map<string, Map<number, RequestSeries>>()

  private readonly pointsStored = counter(
    this.registry,
    "dashstream_points_stored_total",
    "Points durably stored by acknowledged pushes (one per entry; a clear stores none)"
  )
  private readonly pushErrors = counter(
    this.registry,
    "dashstream_push_errors_total",
    "Pushes answered with an error, by the error code of the answer (docs/api.md section 5)",
    ["code"]
  )
  private readonly ingestSkipped = counter(
    this.registry,
    "dashstream_ingest_skipped_total",
    "Values of stored pushes left out because their stream is not a declared widget (line protocol, docs/api.md section 13.1)"
  )
  private readonly groupCommits = new Histogram({
    name: "dashstream_group_commit_calls",
    help: "Write calls (pushes) per group commit of the storage",
    buckets: groupBuckets,
    registers: [this.registry]
  })
  private readonly eventStreams = gauge(
    this.registry,
    "dashstream_event_streams_open",
    "Live event streams (Server-Sent Events) open now"
  )
  private readonly events = counter(
    this.registry,
    "dashstream_events_sent_total",
    "Events written to live event streams (entries, clears, deletions; not keep-alive pings)"
  )
  private readonly alertTransitions = counter(
    this.registry,
    "dashstream_alert_transitions_total",
    "Alert rule transitions stored by this process, by direction (firing or resolved; silenced ones included)",
    ["to"]
  )
  private readonly alertDeliveries = counter(
    this.registry,
    "dashstream_alert_delivery_attempts_total",
    "Alert delivery attempts recorded, by receiver kind and outcome (delivered, retried, failed)",
    ["kind", "outcome"]
  )
  private readonly decimationPasses = counter(
    this.registry,
    "dashstream_decimation_passes_total",
    "Decimation passes completed by this process"
  )
  private readonly decimationExamined = counter(
    this.registry,
    "dashstream_decimation_entries_examined_total",
    "Entries read by completed decimation passes"
  )
  private readonly decimationRemoved = counter(
    this.registry,
    "dashstream_decimation_entries_removed_total",
    "Entries deleted by completed decimation passes"
  )
  private readonly decimationDuration = gauge(
    this.registry,
    "dashstream_decimation_last_pass_duration_seconds",
    "Duration of the last completed decimation pass"
  )
  private readonly decimationLastEnd = gauge(
    this.registry,
    "dashstream_decimation_last_pass_timestamp_seconds",
    "UNIX time at which the last decimation pass completed"
  )

  /**
   * Counts one group commit for the storage adapters (`layer(config, metrics.writeObserver)`): its size in calls
   * goes to `dashstream_group_commit_calls`, the points it stored to `dashstream_points_stored_total`.
   */
  readonly writeObserver: WriteObserver = {
    groupCommitted: (calls, points) => {
      this.groupCommits.observe(calls)
      if (points > 0) this.pointsStored.inc(points)
    }
  }

  private readonly others: OtherProcesses | undefined

  /**
   * @param options.defaultMetrics - `false` leaves out `prom-client`'s process and Node.js metrics (default: included,
   *   with their standard names, e.g. `process_cpu_seconds_total`, `process_resident_memory_bytes`).
   * @param options.others - the server's other processes (`serve --workers N`): {@link exposition} then serves the
   *   sum of this process's metrics and theirs (counters and histograms summed, the gauges of open event streams
   *   summed; prom-client's own aggregation of its process metrics).
   */
  constructor(options: { readonly defaultMetrics?: boolean; readonly others?: OtherProcesses } = {}) {
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry })
    this.others = options.others
  }

  /** This process's metrics as JSON (see {@link MetricsSnapshot}). */
  async snapshot(): Promise<MetricsSnapshot> {
    const rest = await this.registry.getMetricsAsJSON()
    return [...requestJson(this.requestSeries.values()), ...(rest as unknown as MetricsSnapshot)]
  }

  /** The Prometheus text of the sum of several processes' snapshots (prom-client's `AggregatorRegistry`). */
  static async render(snapshots: ReadonlyArray<MetricsSnapshot>): Promise<string> {
    return AggregatorRegistry.aggregate(snapshots as never).metrics()
  }

  /** The `Content-Type` of {@link exposition}: Prometheus text format 0.0.4. */
  get contentType(): string {
    return this.registry.contentType
  }

  /**
   * Every metric in the Prometheus text exposition format (what `GET /metrics` answers): this process's, or the
   * whole server's when it has other processes (see the constructor).
   */
  async exposition(): Promise<string> {
    if (this.others !== undefined) {
      const [own, others] = await Promise.all([this.snapshot(), this.others()])
      return Metrics.render([own, ...others])
    }
    const rest = await this.registry.metrics()
    return `${requestText(this.requestSeries.values())}\n${rest}`
  }

  private series(route: string, method: string, status: number): RequestSeries {
    const key = `${route} ${method} ${status}`
    let series = this.requestSeries.get(key)
    if (series === undefined) {
      series = new RequestSeries(route, method, status)
      this.requestSeries.set(key, series)
    }
    return series
  }

  /**
   * Records one answered request: `route` is its route template (see {@link unmatchedRoute}), never a URL; `status`
   * the HTTP status; `seconds` from receipt to the end of the answer.
   */
  request(route: string, method: string, status: number, seconds: number): void {
    this.series(route, method, status).observe(seconds)
  }

  /**
   * Records one answered push (`POST /customSend`): as {@link request}, plus `dashstream_push_errors_total` by
   * `errorCode` when it was answered with an error.
   */
  push(status: number, seconds: number, errorCode: string | undefined): void {
    this.ingest(pushRoute, status, seconds, errorCode, 0)
  }

  /**
   * Records one answered push of any protocol (the ingest lane, `POST` to `route`, a route template): as
   * {@link request}, plus `dashstream_push_errors_total` by `errorCode` when it was answered with an error, and
   * `dashstream_ingest_skipped_total` by the values it left out (undeclared streams).
   */
  ingest(route: string, status: number, seconds: number, errorCode: string | undefined, skipped: number): void {
    let byStatus = this.ingestSeries.get(route)
    if (byStatus === undefined) {
      byStatus = new Map()
      this.ingestSeries.set(route, byStatus)
    }
    let series = byStatus.get(status)
    if (series === undefined) {
      series = this.series(route, "POST", status)
      byStatus.set(status, series)
    }
    series.observe(seconds)
    if (errorCode !== undefined) this.pushErrors.inc({ code: errorCode })
    if (skipped > 0) this.ingestSkipped.inc(skipped)
  }

  /**
   * Records `req` once its answer is finished or its connection closed, under the route template `route(url)`
   * returns ({@link unmatchedRoute} for `undefined`). Call it when the request arrives.
   */
  track(req: IncomingMessage, res: ServerResponse, route: (url: string) => string | undefined): void {
    const start = performance.now()
    res.once("close", () => {
      this.request(
        route(req.url ?? "/") ?? unmatchedRoute,
        req.method ?? "GET",
        res.statusCode,
        (performance.now() - start) / 1000
      )
    })
  }

  /** A live event stream started (docs/api.md section 10): `dashstream_event_streams_open` goes up by one. */
  eventStreamOpened(): void {
    this.eventStreams.inc()
  }

  /** A live event stream ended, whatever the reason: `dashstream_event_streams_open` goes down by one. */
  eventStreamClosed(): void {
    this.eventStreams.dec()
  }

  /** `n` events were written to live event streams (`dashstream_events_sent_total`). */
  eventsSent(n: number): void {
    if (n > 0) this.events.inc(n)
  }

  /** Records a completed decimation pass (docs/api.md section 9): its counts, its duration and when it ended. */
  decimationPass(result: DecimationPassFigures): void {
    this.decimationPasses.inc()
    if (result.entriesExamined > 0) this.decimationExamined.inc(result.entriesExamined)
    if (result.entriesRemoved > 0) this.decimationRemoved.inc(result.entriesRemoved)
    this.decimationDuration.set(result.durationMs / 1000)
    this.decimationLastEnd.set(Date.now() / 1000)
  }

  /**
   * Counts alert transitions stored (docs/api.md section 18): `to` is `firing` or `resolved`. Labels never carry a
   * rule, stream or receiver.
   */
  alertTransition(to: "firing" | "resolved", count = 1): void {
    this.alertTransitions.inc({ to }, count)
  }

  /**
   * Counts one recorded delivery attempt by receiver kind (`webhook`, `slack`, `alertmanager`) and outcome
   * (`delivered`; `retried`: not accepted, tried again later; `failed`: given up after 24 hours). Never a URL.
   */
  alertDelivery(kind: string, outcome: "delivered" | "retried" | "failed"): void {
    this.alertDeliveries.inc({ kind, outcome })
  }
}
