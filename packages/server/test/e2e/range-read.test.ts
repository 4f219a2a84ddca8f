/**
 * Range reads over HTTP (README, "Range reads"): `from`/`to` windows, `since` paging inside a window, `points`
 * buckets that keep each bucket's first, last, lowest and highest entries, and the 400 `invalid_request` answers whose
 * `path` names the parameter.
 */
import { describe, expect, it } from "vitest"
import { backends, type Entry, expectError, expectReadOk, expectSuccess, suiteName, useServer } from "./harness.js"

const T = 1_600_000_000

/** The bucket of `ts` (seconds, exact in micros) among `n` over `[lower, upper]`, as the README states it. */
const bucketOf = (ts: number, lower: number, upper: number, n: number) => {
  const micros = (s: number) => BigInt(Math.round(s * 1_000_000))
  if (upper === lower) return 0
  return Math.min(n - 1, Number(((micros(ts) - micros(lower)) * BigInt(n)) / (micros(upper) - micros(lower))))
}

for (const backend of backends) {
  describe(suiteName("range read", backend), () => {
    const ctx = useServer(backend)

    it("from and to bound ts inclusively; since pages inside the window; a window without entries is []", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ s: "sparkline" })
      const point = Array.from({ length: 50 }, (_, i) => ({ number: i, timestamp: T + i }))
      expectSuccess(await api.pushPoint(accessKey, "s", point))
      const all = await api.entries(accessKey, "s")
      expect(await api.entries(accessKey, "s", `?from=${T + 10}&to=${T + 19}`)).toEqual(all.slice(10, 20))
      expect(await api.entries(accessKey, "s", `?from=${T + 45}`)).toEqual(all.slice(45))
      expect(await api.entries(accessKey, "s", `?to=${T + 2}`)).toEqual(all.slice(0, 3))
      expect(await api.entries(accessKey, "s", `?from=${T + 9.5}&to=${T + 10.5}`)).toEqual(all.slice(10, 11))
      const pages: Array<Array<Entry>> = []
      let since = T + 4
      for (let guard = 0; guard < 10; guard++) {
        const page = await api.entries(accessKey, "s", `?since=${since}&to=${T + 30}&limit=10`)
        if (page.length === 0) break
        pages.push(page)
        since = page[page.length - 1]!.ts
      }
      expect(pages.map((p) => p.length)).toEqual([10, 10, 6])
      expect(pages.flat()).toEqual(all.slice(5, 31))
      for (const query of [`?to=${T - 1}`, `?from=${T + 50}`, `?from=${T + 50}&points=10`, `?to=${T - 1}&points=10`]) {
        const r = await api.read(accessKey, "s", query)
        expectReadOk(r)
        expect(r.json, query).toEqual({ message: "Success!", data: [] })
        expect(r.headers.get("cache-control")).toMatch(/\bno-store\b/)
      }
      const empty = await api.setup({ e: "line-graph" })
      expect(await api.entries(empty.accessKey, "e", "?points=100")).toEqual([])
    })

    it("points=N keeps stored entries only, at most 4 a bucket, with every bucket's lowest and highest", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ s: "line-graph" })
      // 3,000 entries a minute apart, values with many ties.
      const values = Array.from({ length: 3_000 }, (_, i) => Math.round(50 * Math.sin(i / 37)) + (i % 5))
      for (let start = 0; start < values.length; start += 1_000) {
        const point = values.slice(start, start + 1_000).map((n, j) => ({ number: n, timestamp: T + (start + j) * 60 }))
        expectSuccess(await api.pushPoint(accessKey, "s", point))
      }
      const all = await api.entries(accessKey, "s")
      expect(all).toHaveLength(3_000)
      const stored = new Map(all.map((e) => [e.ts, JSON.stringify(e.point)]))
      for (const [query, lower, upper, n] of [
        [`?points=40`, T, T + 2_999 * 60, 40],
        [`?from=${T + 600}&to=${T + 90_000.5}&points=100`, T + 600, T + 90_000.5, 100],
        [`?from=${T}&points=7`, T, T + 2_999 * 60, 7],
        [`?to=${T + 5_000}&points=2`, T, T + 5_000, 2]
      ] as const) {
        const got = await api.entries(accessKey, "s", query)
        const window = all.filter((e) => e.ts >= lower && e.ts <= upper)
        expect(got.length, query).toBeLessThanOrEqual(4 * n)
        for (const e of got) expect(stored.get(e.ts), query).toBe(JSON.stringify(e.point))
        expect(got.every((e, i) => i === 0 || e.ts > got[i - 1]!.ts)).toBe(true)
        // Drawn one column a bucket: the same lowest and highest as every entry, and the same first and last.
        const columns = (entries: ReadonlyArray<Entry>) => {
          const out = new Map<number, Array<number>>()
          for (const e of entries) {
            const k = bucketOf(e.ts, lower, upper, n)
            const v = (e.point as { number: number }).number
            const c = out.get(k)
            if (c === undefined) out.set(k, [v, v, e.ts, e.ts])
            else out.set(k, [Math.min(c[0]!, v), Math.max(c[1]!, v), c[2]!, e.ts])
          }
          return [...out.entries()]
        }
        expect(columns(got), query).toEqual(columns(window))
      }
    })

    it("points on an xy-graph keeps by y; on a text feed the last entry of each bucket", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ xy: "xy-graph", feed: "text-feed" })
      for (const y of [5, 2, 2, 8, 8, 3]) expectSuccess(await api.pushPoint(accessKey, "xy", { x: y, y }))
      const xy = await api.entries(accessKey, "xy")
      // Two buckets over the window; ties keep the earliest: of y 2, 2 the first, of y 8, 8 the first.
      const kept = await api.entries(accessKey, "xy", `?from=${xy[0]!.ts}&to=${xy[5]!.ts}&points=2`)
      const expected = new Set<Entry>()
      const lower = xy[0]!.ts
      const upper = xy[5]!.ts
      for (const k of [0, 1]) {
        const bucket = xy.filter((e) => bucketOf(e.ts, lower, upper, 2) === k)
        const y = (e: Entry) => (e.point as { y: number }).y
        expected.add(bucket[0]!).add(bucket[bucket.length - 1]!)
        expected.add(bucket.reduce((a, b) => (y(b) < y(a) ? b : a))).add(bucket.reduce((a, b) => (y(b) > y(a) ? b : a)))
      }
      expect(kept).toEqual(xy.filter((e) => expected.has(e)))
      for (let i = 0; i < 4; i++) expectSuccess(await api.pushPoint(accessKey, "feed", { title: `t${i}`, msg: "m" }))
      const feed = await api.entries(accessKey, "feed")
      const one = await api.entries(accessKey, "feed", `?from=${feed[0]!.ts}&to=${feed[3]!.ts + 3600}&points=2`)
      expect(one).toEqual([feed[3]])
    })

    it("a range read of more than a page is streamed whole, in order", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ s: "sparkline" })
      const point = Array.from({ length: 2_500 }, (_, i) => ({ number: i, timestamp: T + i }))
      expectSuccess(await api.pushPoint(accessKey, "s", point))
      const got = await api.entries(accessKey, "s", `?from=${T + 100}&to=${T + 2_399}`)
      expect(got.map((e) => e.ts)).toEqual(Array.from({ length: 2_300 }, (_, i) => T + 100 + i))
      expect(await api.entries(accessKey, "s", `?from=${T}&limit=1500`)).toHaveLength(1_500)
    })

    it("bad parameters are 400 invalid_request with path naming the parameter", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ s: "number" })
      for (const [query, path] of [
        ["?since=1&from=1", "since"],
        ["?from=", "from"],
        ["?from=1e9", "from"],
        ["?from=Infinity", "from"],
        ["?to=-5", "to"],
        ["?to=abc&points=5", "to"],
        ["?from=2&to=1", "to"],
        ["?since=x&to=5", "since"],
        ["?points=1", "points"],
        ["?points=10001", "points"],
        ["?points=2.5", "points"],
        ["?points=5&limit=10", "limit"],
        ["?from=1&limit=0", "limit"]
      ] as const) {
        expectError(await api.read(accessKey, "s", query), 400, "invalid_request", path)
      }
      expectError(await api.read(accessKey, "nope", "?points=5"), 404, "stream_not_found")
      expectError(await api.read("bogus-key", "s", "?points=5"), 403, "forbidden")
    })

    it("the OpenAPI document describes from, to and points", async () => {
      const { api } = ctx
      const doc = await api.fetch("/openapi.json")
      const read = doc.json.paths["/api/v2/{accessKey}/datastream/{streamName}"].get
      const names = (read.parameters as Array<{ name: string }>).map((p) => p.name)
      expect(names).toEqual(expect.arrayContaining(["since", "limit", "from", "to", "points"]))
    })
  })
}
