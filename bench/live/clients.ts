/**
 * The subscribers of the live benchmark, in a child process of its own (started by `run.ts` with an IPC channel), so
 * that receiving thousands of events does not delay the pushes the parent sends and times, and the parent's timers
 * do not delay the arrivals timed here.
 *
 * Every subscriber is a raw Server-Sent Events connection over node:http (no agent, one socket each). The pushed
 * point is the push's send time: `process.hrtime.bigint()` in microseconds, taken by the parent just before it wrote
 * the push. That clock is CLOCK_MONOTONIC, shared by every process on the machine, so the latency of an event is its
 * arrival time here (taken first thing in the socket's `data` callback, before any parsing) minus that value.
 *
 * Commands (IPC messages), each answered by one message:
 * - `{cmd: "open", base, paths, concurrency}`: opens one subscriber per path; answers `{opened, failed, statuses}`
 *   once every one has its status line (a 200 and the `retry:` line, or an error).
 * - `{cmd: "measure", from}`: from now on records the latency of every `entry` event whose value is >= `from`.
 * - `{cmd: "results", expected}`: waits (up to 5 s) until `expected` events were recorded per subscriber, then
 *   answers `{n, missing, extra, disorder, p50, p99, max, histogram}` and stops recording: latencies in milliseconds;
 *   `extra` counts events beyond `expected` of a subscriber, `disorder` events whose `ts` was not above the previous
 *   one of the same stream (`"streamName"` of a dashboard's events) at the same subscriber (sent twice or out of
 *   order); `histogram` counts them per bucket (`histogram.ts`), so that the results of several processes can be merged.
 * - `{cmd: "stats"}`: `{open, events, pings, ended}` over all subscribers.
 * - `{cmd: "close"}`: destroys every connection; answers `{closed}`.
 */
import { type ClientRequest, request } from "node:http"
import { bucketOf, type Histogram } from "./histogram.js"

interface Subscriber {
  req: ClientRequest
  open: boolean
  buffer: string
  recorded: number
  /** The last `ts` (microseconds) recorded per stream name ("" for a stream's own event stream). */
  last: Map<string, number>
}

const subscribers: Array<Subscriber> = []
let events = 0
let pings = 0
let ended = 0
let measuringFrom = Infinity
let latencies = new Float64Array(1 << 16)
let count = 0
let disorder = 0

const record = (ms: number) => {
  if (count === latencies.length) {
    const bigger = new Float64Array(latencies.length * 2)
    bigger.set(latencies)
    latencies = bigger
  }
  latencies[count++] = ms
}

const valueOf = /"point":\{"number":([0-9.eE+-]+)\}/
const streamOf = /^data: \{"streamName":"([^"]*)"/m
const tsOf = /"ts":(\d+)(?:\.(\d+))?/

// One chunk of a subscriber's body: complete events are parsed; the rest waits for the next chunk.
const onChunk = (sub: Subscriber, arrivedUs: number, chunk: string) => {
  sub.buffer += chunk
  let end: number
  while ((end = sub.buffer.indexOf("\n\n")) !== -1) {
    const block = sub.buffer.slice(0, end)
    sub.buffer = sub.buffer.slice(end + 2)
    if (block.startsWith(":")) {
      pings++
      continue
    }
    if (!block.startsWith("event: entry")) continue
    events++
    const m = valueOf.exec(block)
    if (m === null) continue
    const sentUs = Number(m[1])
    if (sentUs >= measuringFrom) {
      record((arrivedUs - sentUs) / 1000)
      sub.recorded++
      // Order is the entries' `ts` order (the pushes, sent open loop, may be stored in another order than sent).
      const stream = streamOf.exec(block)?.[1] ?? ""
      const t = tsOf.exec(block)
      const ts = t === null ? NaN : Number(t[1]) * 1e6 + Number((t[2] ?? "").padEnd(6, "0"))
      if (!(ts > (sub.last.get(stream) ?? -Infinity))) disorder++
      sub.last.set(stream, ts)
    }
  }
}

const openOne = (base: URL, path: string): Promise<number | string> =>
  new Promise((resolve) => {
    const sub: Subscriber = {
      req: undefined as unknown as ClientRequest,
      open: false,
      buffer: "",
      recorded: 0,
      last: new Map()
    }
    sub.req = request(
      { host: base.hostname, port: base.port, path, agent: false, headers: { accept: "text/event-stream" } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume()
          resolve(res.statusCode ?? 0)
          return
        }
        sub.open = true
        subscribers.push(sub)
        res.setEncoding("utf8")
        let first = true
        res.on("data", (chunk: string) => {
          const arrivedUs = Number(process.hrtime.bigint() / 1000n)
          if (first) {
            first = false
            resolve(200)
          }
          onChunk(sub, arrivedUs, chunk)
        })
        res.on("close", () => {
          if (sub.open) ended++
          sub.open = false
        })
        res.on("error", () => {})
      }
    )
    sub.req.on("error", (e) => {
      if (!sub.open) resolve(e.message)
    })
    sub.req.end()
  })

const open = async (base: string, paths: ReadonlyArray<string>, concurrency: number) => {
  const url = new URL(base)
  const statuses: Record<string, number> = {}
  let next = 0
  const worker = async () => {
    while (next < paths.length) {
      const status = String(await openOne(url, paths[next++]!))
      statuses[status] = (statuses[status] ?? 0) + 1
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return { opened: statuses["200"] ?? 0, failed: paths.length - (statuses["200"] ?? 0), statuses }
}

const percentile = (sorted: Float64Array, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

const results = async (expected: number) => {
  const deadline = Date.now() + 5_000
  const live = () => subscribers.filter((s) => s.open)
  while (Date.now() < deadline && live().some((s) => s.recorded < expected)) {
    await new Promise((r) => setTimeout(r, 50))
  }
  measuringFrom = Infinity
  const sorted = latencies.slice(0, count).sort()
  const missing = subscribers.reduce((sum, s) => sum + Math.max(0, expected - s.recorded), 0)
  const extra = subscribers.reduce((sum, s) => sum + Math.max(0, s.recorded - expected), 0)
  const histogram: Histogram = {}
  for (let i = 0; i < sorted.length; i++) {
    const b = bucketOf(sorted[i]!)
    histogram[b] = (histogram[b] ?? 0) + 1
  }
  for (const s of subscribers) s.recorded = 0
  count = 0
  const disordered = disorder
  disorder = 0
  return {
    n: sorted.length,
    missing,
    extra,
    disorder: disordered,
    histogram,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length === 0 ? NaN : sorted[sorted.length - 1]!
  }
}

type Command =
  | { cmd: "open"; base: string; paths: Array<string>; concurrency: number }
  | { cmd: "measure"; from: number }
  | { cmd: "results"; expected: number }
  | { cmd: "stats" }
  | { cmd: "close" }

process.on("message", (message: Command) => {
  const reply = (value: unknown) => process.send!(value)
  switch (message.cmd) {
    case "open":
      return void open(message.base, message.paths, message.concurrency).then(reply)
    case "measure":
      measuringFrom = message.from
      count = 0
      disorder = 0
      for (const s of subscribers) {
        s.recorded = 0
        s.last.clear()
      }
      return reply({ ok: true })
    case "results":
      return void results(message.expected).then(reply)
    case "stats":
      return reply({ open: subscribers.filter((s) => s.open).length, events, pings, ended })
    case "close": {
      const closed = subscribers.length
      for (const s of subscribers) {
        s.open = false
        s.req.destroy()
      }
      subscribers.length = 0
      ended = 0
      return reply({ closed })
    }
  }
})
// The parent going away (it exits or is killed) ends this process too.
process.on("disconnect", () => process.exit(0))
