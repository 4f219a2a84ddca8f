import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Metrics } from "../src/index.js"
import { parseExposition, valueOf, type Exposition } from "./support/exposition.js"
import { json, push, pushRaw, read, setupAccount, startServer, type TestServer } from "./support/server.js"

const readRoute = "/api/v2/:accessKey/datastream/:streamName"

describe("GET /metrics (docs/api.md section 12)", () => {
  let server: TestServer
  let key: string
  const metrics = new Metrics()
  // Names that must never appear in the exposition.
  const streamName = "secret-revenue-stream"

  beforeAll(async () => {
    server = await startServer({ metrics })
    key = (await setupAccount(server, [[streamName, "sparkline"]])).accessKey
  })
  afterAll(() => server.close())

  const scrape = async (): Promise<{ text: string; exposition: Exposition }> => {
    const res = await fetch(`${server.url}/metrics`)
    assert.strictEqual(res.status, 200)
    assert.strictEqual(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8")
    const text = await res.text()
    return { text, exposition: parseExposition(text) }
  }

  it("serves the process's own metrics and Dashstream's, typed, in the text format", async () => {
    const { exposition } = await scrape()
    for (const [name, type] of [
      ["process_cpu_seconds_total", "counter"],
      ["process_resident_memory_bytes", "gauge"],
      ["nodejs_heap_size_used_bytes", "gauge"],
      ["dashstream_http_requests_total", "counter"],
      ["dashstream_http_request_duration_seconds", "histogram"],
      ["dashstream_points_stored_total", "counter"],
      ["dashstream_push_errors_total", "counter"],
      ["dashstream_group_commit_calls", "histogram"],
      ["dashstream_event_streams_open", "gauge"],
      ["dashstream_events_sent_total", "counter"],
      ["dashstream_decimation_entries_examined_total", "counter"],
      ["dashstream_decimation_entries_removed_total", "counter"],
      ["dashstream_decimation_last_pass_duration_seconds", "gauge"]
    ] as const) {
      assert.strictEqual(exposition.types.get(name), type, name)
    }
    assert.isAbove(valueOf(exposition, "process_resident_memory_bytes"), 0)
  })

  it("counts pushes by status and errors by code, reads and unknown paths by route template, never by URL", async () => {
    const before = (await scrape()).exposition
    const pushes = { route: "/customSend", method: "POST" }
    for (let i = 0; i < 3; i++) {
      assert.strictEqual((await push(server, { accessKey: key, streamName, point: { number: i } })).status, 200)
    }
    // The trailing-slash path is the same route.
    assert.strictEqual(
      (await pushRaw(server, JSON.stringify({ accessKey: key, streamName, point: 9 }), {}, "/customSend/")).status,
      200
    )
    assert.strictEqual((await push(server, { accessKey: "ds_not-a-key", streamName, point: 1 })).status, 403)
    assert.strictEqual((await pushRaw(server, "{not json")).status, 400)
    assert.strictEqual((await push(server, { accessKey: key, streamName: "missing-stream", point: 1 })).status, 404)
    assert.strictEqual((await json(await read(server, key, streamName, "?since=0"))).status, 200)
    assert.strictEqual((await json(await read(server, key, "missing-stream"))).status, 404)
    assert.strictEqual((await fetch(`${server.url}/no/such/${key}`)).status, 404)

    const { text, exposition: after } = await scrape()
    const delta = (name: string, labels: Record<string, string> = {}) =>
      valueOf(after, name, labels) - valueOf(before, name, labels)
    assert.strictEqual(delta("dashstream_http_requests_total", { ...pushes, status: "200" }), 4)
    assert.strictEqual(delta("dashstream_http_requests_total", { ...pushes, status: "403" }), 1)
    assert.strictEqual(delta("dashstream_http_requests_total", { ...pushes, status: "400" }), 1)
    assert.strictEqual(delta("dashstream_http_requests_total", { ...pushes, status: "404" }), 1)
    assert.strictEqual(delta("dashstream_http_request_duration_seconds_count", { ...pushes, status: "200" }), 4)
    assert.isAbove(delta("dashstream_http_request_duration_seconds_sum", { ...pushes, status: "200" }), 0)
    const buckets = { ...pushes, status: "200", le: "+Inf" }
    assert.strictEqual(delta("dashstream_http_request_duration_seconds_bucket", buckets), 4)
    assert.strictEqual(delta("dashstream_push_errors_total", { code: "forbidden" }), 1)
    assert.strictEqual(delta("dashstream_push_errors_total", { code: "invalid_json" }), 1)
    assert.strictEqual(delta("dashstream_push_errors_total", { code: "stream_not_found" }), 1)
    assert.strictEqual(delta("dashstream_push_errors_total"), 3)
    const reads = { route: readRoute, method: "GET" }
    assert.strictEqual(delta("dashstream_http_requests_total", { ...reads, status: "200" }), 1)
    assert.strictEqual(delta("dashstream_http_requests_total", { ...reads, status: "404" }), 1)
    assert.strictEqual(delta("dashstream_http_requests_total", { route: "unmatched", status: "404" }), 1)
    // The scrape before this one is counted as well, under its own route.
    assert.strictEqual(delta("dashstream_http_requests_total", { route: "/metrics", method: "GET", status: "200" }), 1)

    for (const secret of [key, streamName, "missing-stream", "/no/such"]) {
      assert.notInclude(text, secret)
    }
    for (const sample of after.samples) {
      if (sample.labels["route"] !== undefined) {
        assert.include(
          [readRoute, "/customSend", "/metrics", "/admin/accounts", "/admin/accounts/:id/widgets", "unmatched"],
          sample.labels["route"]
        )
      }
    }
  })

  it("answers 405 with Allow to other methods on /metrics, and describes it in the OpenAPI document", async () => {
    const res = await fetch(`${server.url}/metrics`, { method: "POST", body: "x" })
    assert.strictEqual(res.status, 405)
    assert.strictEqual(res.headers.get("allow"), "GET, HEAD")
    assert.strictEqual(((await res.json()) as any).error.code, "method_not_allowed")
    const spec = (await (await fetch(`${server.url}/openapi.json`)).json()) as any
    const get = spec.paths["/metrics"]?.get
    assert.isDefined(get)
    assert.isDefined(get.responses["200"].content["text/plain; version=0.0.4; charset=utf-8"])
  })

  it("shows what the storage, the decimation pass and the live lane report through the server's instance", async () => {
    const before = (await scrape()).exposition
    metrics.writeObserver.groupCommitted(7, 12)
    metrics.writeObserver.groupCommitted(1, 0)
    metrics.eventStreamOpened()
    metrics.eventStreamOpened()
    metrics.eventStreamClosed()
    metrics.eventsSent(5)
    metrics.decimationPass({ entriesExamined: 100, entriesRemoved: 60, durationMs: 1500 })
    const after = (await scrape()).exposition
    const delta = (name: string, labels: Record<string, string> = {}) =>
      valueOf(after, name, labels) - valueOf(before, name, labels)
    assert.strictEqual(delta("dashstream_points_stored_total"), 12)
    assert.strictEqual(delta("dashstream_group_commit_calls_count"), 2)
    assert.strictEqual(delta("dashstream_group_commit_calls_sum"), 8)
    assert.strictEqual(delta("dashstream_group_commit_calls_bucket", { le: "1" }), 1)
    assert.strictEqual(delta("dashstream_group_commit_calls_bucket", { le: "10" }), 2)
    assert.strictEqual(valueOf(after, "dashstream_event_streams_open"), 1)
    assert.strictEqual(delta("dashstream_events_sent_total"), 5)
    assert.strictEqual(delta("dashstream_decimation_passes_total"), 1)
    assert.strictEqual(delta("dashstream_decimation_entries_examined_total"), 100)
    assert.strictEqual(delta("dashstream_decimation_entries_removed_total"), 60)
    assert.strictEqual(valueOf(after, "dashstream_decimation_last_pass_duration_seconds"), 1.5)
    assert.approximately(valueOf(after, "dashstream_decimation_last_pass_timestamp_seconds"), Date.now() / 1000, 60)
  })
})

describe("Metrics of several processes (serve --workers N)", () => {
  it("the exposition of a process with others is the sum of every process's figures, in the same families", async () => {
    const worker = (pushes: number, points: number) => {
      const m = new Metrics({ defaultMetrics: false })
      for (let i = 0; i < pushes; i++) m.push(200, 0.002, undefined)
      m.push(400, 0.02, "invalid_json")
      m.writeObserver.groupCommitted(pushes, points)
      m.eventStreamOpened()
      return m
    }
    const b = worker(3, 3)
    const a = new Metrics({ defaultMetrics: false, others: async () => [await b.snapshot()] })
    for (let i = 0; i < 2; i++) a.push(200, 0.2, undefined)
    a.writeObserver.groupCommitted(2, 5)
    const exposition = parseExposition(await a.exposition())
    const push = { route: "/customSend", method: "POST" }
    assert.strictEqual(valueOf(exposition, "dashstream_http_requests_total", { ...push, status: "200" }), 5)
    assert.strictEqual(valueOf(exposition, "dashstream_http_requests_total", { ...push, status: "400" }), 1)
    assert.strictEqual(
      valueOf(exposition, "dashstream_http_request_duration_seconds_bucket", { ...push, status: "200", le: "0.005" }),
      3
    )
    assert.strictEqual(
      valueOf(exposition, "dashstream_http_request_duration_seconds_bucket", { ...push, status: "200", le: "+Inf" }),
      5
    )
    assert.strictEqual(valueOf(exposition, "dashstream_push_errors_total", { code: "invalid_json" }), 1)
    assert.strictEqual(valueOf(exposition, "dashstream_points_stored_total"), 8)
    assert.strictEqual(valueOf(exposition, "dashstream_group_commit_calls_count"), 2)
    assert.strictEqual(valueOf(exposition, "dashstream_event_streams_open"), 1)
  })
})

describe("parseExposition", () => {
  it("reads labels with escapes and refuses malformed lines", () => {
    const parsed = parseExposition(
      '# HELP a_total A.\n# TYPE a_total counter\na_total{x="q\\"uo\\\\te",y="n\\nl"} 3\n# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1.5e0\nh_count 2\n'
    )
    assert.deepStrictEqual(parsed.samples[0], { name: "a_total", labels: { x: 'q"uo\\te', y: "n\nl" }, value: 3 })
    assert.strictEqual(valueOf(parsed, "h_count"), 2)
    assert.throws(() => parseExposition("# TYPE a counter\na{x=1} 2\n"))
    assert.throws(() => parseExposition("untyped_sample 1\n"))
    assert.throws(() => parseExposition("# TYPE a counter\na 1 2 3\n"))
  })
})
