/**
 * The rules of a range read (docs/api.md section 6.1) over HTTP, one check each, beside range-read.test.ts: `since`
 * standing in for `from` with `points` (the buckets start at `since`), one bucket when `U = L`, bounds exact to the
 * microsecond (`from` rounded up, `to` down), random windows over 20,000 entries and `points` on every widget type
 * against a brute-force selection (ties keep the earliest), decimated data read as stored, the edges of every
 * parameter, and the OpenAPI document of the view tokens' reads.
 */
import { describe, expect, it } from "vitest"
import {
  backends,
  type Entry,
  expectError,
  expectReadOk,
  expectSuccess,
  numberTypes,
  runCli,
  suiteName,
  useServer,
  widgetTypes
} from "./harness.js"
import { samplePoint } from "./widgetPoints.js"

const T = 1_600_000_000
const micros = (s: number) => BigInt(Math.round(s * 1_000_000))

/**
 * What a range read with `points=n` over `[lower, upper]` keeps of `window` (its entries, ascending), brute force
 * from docs/api.md section 6.1: bucket `min(n - 1, floor((t - L) * n / (U - L)))` (one bucket when `U = L`); a bucket
 * keeps its first, last, lowest and highest by `value` (the earliest among equal values), or its last when `value`
 * is undefined.
 */
const m4 = (
  window: ReadonlyArray<Entry>,
  lower: number,
  upper: number,
  n: number,
  value?: (e: Entry) => number
): Array<Entry> => {
  const buckets = new Map<number, Array<Entry>>()
  for (const e of window) {
    const span = micros(upper) - micros(lower)
    const k = span === 0n ? 0 : Math.min(n - 1, Number(((micros(e.ts) - micros(lower)) * BigInt(n)) / span))
    buckets.set(k, [...(buckets.get(k) ?? []), e])
  }
  const kept = new Set<Entry>()
  for (const bucket of buckets.values()) {
    kept.add(bucket.at(-1)!)
    if (value === undefined) continue
    kept.add(bucket[0]!)
    kept.add(bucket.reduce((a, b) => (value(b) < value(a) ? b : a)))
    kept.add(bucket.reduce((a, b) => (value(b) > value(a) ? b : a)))
  }
  return window.filter((e) => kept.has(e))
}

const numberOf = (e: Entry) => (e.point as { number: number }).number
/** Values with many ties (0 to 4, repeating in runs) so that "the earliest among equal values" is checked. */
const tied = (i: number) => Math.floor(i / 3) % 5

for (const backend of backends) {
  describe(suiteName("range read rules", backend), () => {
    const ctx = useServer(backend)

    it("since stands in for from with points: the buckets start at since, its entry excluded", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ s: "sparkline" })
      const point = Array.from({ length: 100 }, (_, i) => ({ number: tied(i), timestamp: T + i }))
      expectSuccess(await api.pushPoint(accessKey, "s", point))
      const all = await api.entries(accessKey, "s")
      const after = (s: number) => all.filter((e) => e.ts > s)
      const within = (from: number, to: number) => all.filter((e) => e.ts >= from && e.ts <= to)
      for (const [query, window, lower, upper, n] of [
        [`?since=${T + 9}&points=9`, after(T + 9), T + 9, T + 99, 9],
        [`?since=${T + 9.5}&to=${T + 60}&points=7`, within(T + 10, T + 60), T + 9.5, T + 60, 7],
        [`?from=${T + 9}&points=9`, within(T + 9, T + 99), T + 9, T + 99, 9],
        // No bounds: L and U are the oldest and newest ts of the stream.
        [`?points=13`, all, T, T + 99, 13],
        [`?to=${T + 41.5}&points=4`, within(T, T + 41), T, T + 41.5, 4]
      ] as const) {
        expect(await api.entries(accessKey, "s", query), query).toEqual(m4(window, lower, upper, n, numberOf))
      }
      // A since at or after to is an empty window, not an error.
      expect(await api.entries(accessKey, "s", `?since=${T + 50}&to=${T + 50}&points=5`)).toEqual([])
      expect(await api.entries(accessKey, "s", `?since=${T + 60}&to=${T + 50}`)).toEqual([])
    })

    it("random windows over 20,000 entries equal the brute-force selection over a since=0 read", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ s: "line-graph" })
      // A seeded generator: the same windows every run. Values with long runs of ties; steps of 1 to 9 seconds.
      let seed = 38
      const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648
      let ts = T
      const point = Array.from({ length: 20_000 }, () => {
        ts += 1 + Math.floor(random() * 9)
        return { number: Math.floor(random() * 6) + (random() < 0.01 ? 100 : 0), timestamp: ts }
      })
      for (let i = 0; i < point.length; i += 1_000) {
        expectSuccess(await api.pushPoint(accessKey, "s", point.slice(i, i + 1_000)))
      }
      const all = await api.entries(accessKey, "s")
      expect(all).toHaveLength(20_000)
      const oldest = all[0]!.ts
      const newest = all.at(-1)!.ts
      for (let run = 0; run < 30; run++) {
        const a = oldest - 50 + Math.floor(random() * (newest - oldest + 100))
        const b = oldest - 50 + Math.floor(random() * (newest - oldest + 100))
        const [from, to] = a <= b ? [a, b + 0.5] : [b, a + 0.5]
        const n = [2, 3, 17, 100, 1_000, 10_000][run % 6]!
        const bounded = run % 3
        const query =
          bounded === 0 ? `?from=${from}&to=${to}` : bounded === 1 ? `?from=${from}` : `?since=${from}&to=${to}`
        const window = all.filter((e) => (bounded === 2 ? e.ts > from : e.ts >= from) && (bounded === 1 || e.ts <= to))
        const lower = from
        const upper = bounded === 1 ? (window.at(-1)?.ts ?? from) : to
        const got = await api.entries(accessKey, "s", `${query}&points=${n}`)
        expect(got, `${query}&points=${n}`).toEqual(m4(window, lower, upper, n, numberOf))
      }
    })

    it("U = L is one bucket: from = to, and a window of one entry", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ s: "line-graph", one: "line-graph" })
      const point = Array.from({ length: 10 }, (_, i) => ({ number: 10 - i, timestamp: T + i }))
      expectSuccess(await api.pushPoint(accessKey, "s", point))
      const all = await api.entries(accessKey, "s")
      expect(await api.entries(accessKey, "s", `?from=${T + 5}&to=${T + 5}&points=3`)).toEqual([all[5]])
      expect(await api.entries(accessKey, "s", `?from=${T + 5}&to=${T + 5}`)).toEqual([all[5]])
      expect(await api.entries(accessKey, "s", `?from=${T + 5.5}&to=${T + 5.5}&points=3`)).toEqual([])
      expect(await api.entries(accessKey, "s", `?from=${T + 9}&points=2`)).toEqual([all[9]])
      expectSuccess(await api.pushPoint(accessKey, "one", { number: 3, timestamp: T }))
      const one = await api.entries(accessKey, "one")
      expect(one).toHaveLength(1)
      expect(await api.entries(accessKey, "one", "?points=2")).toEqual(one)
    })

    it("bounds are exact to the microsecond: from rounds up, to rounds down, ts comes back exact", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ s: "sparkline" })
      const stamps = [T + 0.25, T + 0.250001, T + 0.5, T + 0.749999, T + 0.75]
      expectSuccess(
        await api.pushPoint(
          accessKey,
          "s",
          stamps.map((timestamp, i) => ({ number: i, timestamp }))
        )
      )
      const all = await api.entries(accessKey, "s")
      expect(all.map((e) => e.ts)).toEqual(stamps)
      const tsOf = async (query: string) => (await api.entries(accessKey, "s", query)).map((e) => e.ts)
      expect(await tsOf(`?from=${T}.25&to=${T}.75`)).toEqual(stamps)
      expect(await tsOf(`?from=${T}.2500001`)).toEqual(stamps.slice(1))
      expect(await tsOf(`?from=${T}.2500010`)).toEqual(stamps.slice(1))
      expect(await tsOf(`?from=${T}.2500011`)).toEqual(stamps.slice(2))
      expect(await tsOf(`?to=${T}.7499999`)).toEqual(stamps.slice(0, 4))
      expect(await tsOf(`?to=${T}.7499989`)).toEqual(stamps.slice(0, 3))
      expect(await tsOf(`?to=${T}.7500009`)).toEqual(stamps)
      expect(await tsOf(`?to=${T}.749999`)).toEqual(stamps.slice(0, 4))
      expect(await tsOf(`?since=${T}.250001&to=${T}.749999`)).toEqual(stamps.slice(2, 4))
      // Two buckets, [.25, .5) and [.5, .75]: the entry at .749999 is neither first, last, lowest nor highest of its bucket.
      expect(await tsOf(`?from=${T}.25&to=${T}.75&points=2`)).toEqual([0, 1, 2, 4].map((i) => stamps[i]))
    })

    it("points on every widget type keeps what decimation keeps of a bucket, ties the earliest", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup(Object.fromEntries(widgetTypes.map((t) => [t, t])))
      for (const type of widgetTypes) {
        const numeric = numberTypes.includes(type) || type === "sparkline" || type === "line-graph"
        if (numeric) {
          // The number family takes one point a push; sparklines and line graphs an array.
          const points = Array.from({ length: 24 }, (_, i) => ({ number: tied(i), timestamp: T + i * 10 }))
          if (numberTypes.includes(type)) for (const p of points) expectSuccess(await api.pushPoint(accessKey, type, p))
          else expectSuccess(await api.pushPoint(accessKey, type, points))
        } else if (type === "xy-graph") {
          for (let i = 0; i < 12; i++) expectSuccess(await api.pushPoint(accessKey, type, { x: i, y: tied(i) }))
        } else {
          for (let i = 0; i < 6; i++) expectSuccess(await api.pushPoint(accessKey, type, samplePoint[type]))
        }
        const all = await api.entries(accessKey, type)
        const value = numeric ? numberOf : type === "xy-graph" ? (e: Entry) => (e.point as { y: number }).y : undefined
        const lower = all[0]!.ts
        const upper = all.at(-1)!.ts
        for (const n of [2, 3, 5]) {
          const got = await api.entries(accessKey, type, `?points=${n}`)
          expect(got, `${type} points=${n}`).toEqual(m4(all, lower, upper, n, value))
          expect(got.length, type).toBeLessThanOrEqual((value === undefined ? 1 : 4) * n)
        }
        const mid = all[Math.floor(all.length / 2)]!.ts
        const windowed = await api.entries(accessKey, type, `?from=${lower}&to=${mid}&points=2`)
        const window = all.filter((e) => e.ts <= mid)
        expect(windowed, `${type} to the middle`).toEqual(m4(window, lower, mid, 2, value))
      }
    })

    it("decimated data is read as stored: fewer entries, never invented ones", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ s: "line-graph" })
      // Two days of one point a minute, 2024-01-01 and 02, decimated by a pass on 2024-01-10 (5-minute buckets).
      const start = 1_704_067_200
      const point = Array.from({ length: 2 * 1_440 }, (_, i) => ({
        number: Math.round(100 * Math.sin(i / 50)) + (i % 7),
        timestamp: start + i * 60
      }))
      for (let i = 0; i < point.length; i += 1_000) {
        expectSuccess(await api.pushPoint(accessKey, "s", point.slice(i, i + 1_000)))
      }
      const r = await runCli(["decimate", "--now", "2024-01-10T00:00:00Z", "--db", ctx.db.url])
      expect(r.code, r.stderr).toBe(0)
      const stored = await api.entries(accessKey, "s")
      expect(stored.length).toBeLessThan(point.length)
      const from = start + 3_600.5
      const to = start + 30 * 3_600
      const window = stored.filter((e) => e.ts >= from && e.ts <= to)
      expect(await api.entries(accessKey, "s", `?from=${from}&to=${to}`)).toEqual(window)
      for (const n of [10, 500, 5_000]) {
        expect(await api.entries(accessKey, "s", `?from=${from}&to=${to}&points=${n}`), `points=${n}`).toEqual(
          m4(window, from, to, n, numberOf)
        )
      }
      // A window that ends before the newest entry does not hold it: "the newest is kept" is the pass's rule.
      const early = await api.entries(accessKey, "s", `?to=${start + 600}&points=2`)
      expect(early.every((e) => e.ts <= start + 600)).toBe(true)
    })

    it("the edges of every parameter", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ s: "sparkline" })
      expectSuccess(await api.pushPoint(accessKey, "s", [{ number: 1, timestamp: T }]))
      for (const query of [
        "?points=2",
        "?points=10000",
        "?points=05",
        "?from=0",
        "?to=0",
        "?from=4294967295",
        `?from=${T}&to=${T}`,
        `?from=${T}.000000&limit=100000`,
        `?since=0&to=${T}&limit=1`,
        `?since=${T - 0.5}&points=2`
      ]) {
        expectReadOk(await api.read(accessKey, "s", query))
      }
      for (const [query, path] of [
        ["?points=", "points"],
        ["?points=+5", "points"],
        ["?points=-2", "points"],
        ["?points=0x10", "points"],
        ["?points=1e3", "points"],
        ["?points=%205", "points"],
        ["?from=4294967296", "from"],
        ["?to=4294967296", "to"],
        ["?from=%2B5", "from"],
        ["?to=NaN", "to"],
        ["?from=1.5e3", "from"],
        ["?from=0x10", "from"],
        [`?from=${T}&limit=100001`, "limit"],
        [`?from=${T}&limit=1.5`, "limit"],
        [`?since=1e3&to=${T}`, "since"],
        [`?since=-1&points=5`, "since"],
        [`?since=&to=${T}`, "since"],
        [`?since=0&from=0&points=5`, "since"],
        [`?from=${T}.000001&to=${T}`, "to"]
      ] as const) {
        expectError(await api.read(accessKey, "s", query), 400, "invalid_request", path)
      }
      // In the export read's order: a bad key first, then a bad parameter, then an unknown stream.
      expectError(await api.read("bogus-key", "s", "?points=1"), 403, "forbidden")
      expectError(await api.read(accessKey, "nope", "?points=1"), 400, "invalid_request", "points")
      expectError(await api.read(accessKey, "nope", "?since=1&from=1"), 400, "invalid_request", "since")
      expectError(await api.read(accessKey, "nope", "?points=2"), 404, "stream_not_found")
    })

    it("the OpenAPI document describes the view tokens' range reads with the keyed read's parameters", async () => {
      const { api } = ctx
      const doc = await api.fetch("/openapi.json")
      for (const path of ["/d/{viewToken}/range", "/r/{viewToken}/range"]) {
        const names = (doc.json.paths[path]?.get?.parameters ?? []).map((p: { name: string }) => p.name)
        expect(names, path).toEqual(
          expect.arrayContaining(["viewToken", "stream", "since", "limit", "from", "to", "points"])
        )
      }
    })
  })
}
