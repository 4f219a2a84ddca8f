/**
 * docs/api.md section 9: `dashstream decimate --now <ISO time>` against the running server's database, checked
 * through the export read. Numeric streams use client timestamps at fixed dates, so every bucket is known.
 */
import { describe, expect, it } from "vitest"
import { type Api, backends, type Entry, expectSuccess, runCli, suiteName, useServer } from "./harness.js"

const DAY = 86_400
/** The pass time: 2024-01-10T00:00:00Z. */
const NOW = 1_704_844_800
const NOW_ISO = "2024-01-10T00:00:00Z"

const decimate = async (dbUrl: string, nowIso: string): Promise<void> => {
  const r = await runCli(["decimate", "--now", nowIso, "--db", dbUrl])
  expect(r.code, r.stderr).toBe(0)
  // "prints what it removed"
  expect(r.stdout.trim().length).toBeGreaterThan(0)
}

/**
 * Pushes `[offset seconds, number]` pairs at `base + offset`: one timestamped array on a sparkline, one push per
 * point on the number family (which takes no arrays).
 */
const pushSeries = async (
  api: Api,
  key: string,
  stream: string,
  arrays: boolean,
  base: number,
  pairs: ReadonlyArray<[number, number]>
) => {
  const points = pairs.map(([offset, number]) => ({ number, timestamp: base + offset }))
  if (arrays) expectSuccess(await api.pushPoint(key, stream, points))
  else for (const point of points) expectSuccess(await api.pushPoint(key, stream, point))
}

const summary = (entries: ReadonlyArray<Entry>): Array<[number, unknown]> => entries.map((e) => [e.ts, e.point])

/**
 * What a pass keeps in one bucket (docs/api.md section 9): for numeric values the first, last, lowest and highest
 * (earliest among equals); otherwise the last.
 */
const keepInBucket = (entries: ReadonlyArray<Entry>, value: ((e: Entry) => number) | undefined): Set<Entry> => {
  if (value === undefined) return new Set([entries[entries.length - 1]!])
  let low = entries[0]!
  let high = entries[0]!
  for (const e of entries) {
    if (value(e) < value(low)) low = e
    if (value(e) > value(high)) high = e
  }
  return new Set([entries[0]!, entries[entries.length - 1]!, low, high])
}

/** Expected survivors when all `entries` fall in buckets of `width` seconds that qualify. */
const expectedAfter = (
  entries: ReadonlyArray<Entry>,
  width: number,
  value: ((e: Entry) => number) | undefined
): Array<Entry> => {
  const buckets = new Map<number, Array<Entry>>()
  for (const e of entries) {
    const b = Math.floor(e.ts / width)
    buckets.set(b, [...(buckets.get(b) ?? []), e])
  }
  const keep = new Set<Entry>()
  for (const group of buckets.values()) for (const e of keepInBucket(group, value)) keep.add(e)
  return entries.filter((e) => keep.has(e))
}

for (const backend of backends) {
  describe(suiteName("decimation", backend), () => {
    // The server's own daily pass (03:00 UTC by default) would decimate with the real clock; turn it off so only
    // the CLI passes below run.
    const ctx = useServer(backend, { env: { DASHSTREAM_DECIMATE_AT: "off" } })

    it("numeric tiers: first, last, lowest and highest per bucket; recent data kept whole; idempotent", async () => {
      const { api, db } = ctx
      const { accessKey } = await api.setup({ n: "number", s: "sparkline" })

      // Tier 1 (5-minute buckets, end >= 48 h before): 3 days back.
      const t1 = NOW - 3 * DAY
      const tier1: Array<[number, number]> = [
        [10, 5],
        [20, 1],
        [30, 9],
        [40, 3],
        [50, 4],
        [60, 1], // equal to the lowest, later: dropped
        [70, 9], // equal to the highest, later: dropped
        [80, 6],
        [400, 7] // alone in the next bucket
      ]
      // Tier 2 (1-hour buckets, end >= 14 days before): 20 days back, spread over one hour.
      const t2 = NOW - 20 * DAY
      const tier2: Array<[number, number]> = [
        [100, 5],
        [1000, 2],
        [2000, 8],
        [3000, 4],
        [3500, 6]
      ]
      // Tier 3 (1-day buckets, end >= 90 days before): 100 days back, spread over one day.
      const t3 = NOW - 100 * DAY
      const tier3: Array<[number, number]> = [
        [1000, 3],
        [40_000, 1],
        [50_000, 2],
        [80_000, 3]
      ]
      // Recent: 1 hour before the pass, kept whole.
      const recent = NOW - 3600
      const recentPairs: Array<[number, number]> = [
        [0, 2],
        [10, 8],
        [20, 5],
        [30, 5]
      ]
      for (const stream of ["n", "s"]) {
        const arrays = stream === "s"
        await pushSeries(api, accessKey, stream, arrays, t3, tier3)
        await pushSeries(api, accessKey, stream, arrays, t2, tier2)
        await pushSeries(api, accessKey, stream, arrays, t1, tier1)
        await pushSeries(api, accessKey, stream, arrays, recent, recentPairs)
      }
      await decimate(db.url, NOW_ISO)
      const expected = [
        ...[1000, 40_000, 80_000].map((o) => t3 + o),
        ...[100, 1000, 2000, 3500].map((o) => t2 + o),
        ...[10, 20, 30, 80, 400].map((o) => t1 + o),
        ...[0, 10, 20, 30].map((o) => recent + o)
      ]
      for (const stream of ["n", "s"]) {
        const after = await api.entries(accessKey, stream)
        expect(after.map((e) => e.ts)).toEqual(expected)
        expect(after.map((e) => (e.point as { number: number }).number)).toEqual([
          3, 1, 3, 5, 2, 8, 6, 5, 1, 9, 6, 7, 2, 8, 5, 5
        ])
      }
      // A second pass at the same time removes nothing.
      const once = await Promise.all(["n", "s"].map((s) => api.entries(accessKey, s)))
      await decimate(db.url, NOW_ISO)
      expect(await Promise.all(["n", "s"].map((s) => api.entries(accessKey, s)))).toEqual(once)
    }, 180_000)

    it("decimate beside a busy serve on the same database: the pass waits for the write lock", async () => {
      const { api, db } = ctx
      const { accessKey } = await api.setup({ old: "sparkline", busy: "number" })
      // 20 days of 1-minute points 40 days back (28,800): tier 2 keeps at most 4 an hour, so the pass deletes
      // about 27,000 entries in some 27 batches, each its own write transaction, while the server commits pushes.
      const base = NOW - 40 * DAY
      const minutes = 20 * 1440
      for (let k = 0; k < minutes; k += 4000) {
        const points = []
        for (let j = k; j < Math.min(minutes, k + 4000); j++) points.push({ number: j % 97, timestamp: base + 60 * j })
        expectSuccess(await api.pushPoint(accessKey, "old", points))
      }
      let pushing = true
      const statuses: Array<number> = []
      const pusher = async () => {
        while (pushing) statuses.push((await api.pushPoint(accessKey, "busy", { number: statuses.length })).status)
      }
      const pushers = [pusher(), pusher(), pusher(), pusher()]
      let result: Awaited<ReturnType<typeof runCli>>
      try {
        // The pushers are under way before the pass starts.
        while (statuses.length < 20) await new Promise((resolve) => setTimeout(resolve, 10))
        result = await runCli(["decimate", "--now", NOW_ISO, "--db", db.url])
      } finally {
        pushing = false
        await Promise.all(pushers)
      }
      expect(result.code, result.stderr).toBe(0)
      expect(statuses.filter((s) => s !== 200)).toEqual([])
      expect(statuses.length).toBeGreaterThan(20)
      // Every 1-hour bucket is thinned to its first, last, lowest and highest: at most 4 an hour.
      const after = await api.entries(accessKey, "old")
      expect(after.length).toBeLessThanOrEqual(4 * 20 * 24)
      expect(after.length).toBeGreaterThanOrEqual(2 * 20 * 24)
    }, 180_000)

    it("xy-graph by y, other types keep the last entry; the newest entry of every stream is kept", async () => {
      const { api, db } = ctx
      const { accessKey } = await api.setup({ xy: "xy-graph", feed: "text-feed", lb: "leaderboard", one: "label" })
      expectSuccess(
        await api.pushPoint(accessKey, "xy", [
          { x: 0, y: 5 },
          { x: 1, y: 1 },
          { x: 2, y: 9 },
          { x: 3, y: 3 },
          { x: 4, y: 1 },
          { x: 5, y: 4 }
        ])
      )
      for (let i = 0; i < 4; i++) expectSuccess(await api.pushPoint(accessKey, "feed", { title: `t${i}`, msg: "m" }))
      for (let i = 0; i < 3; i++) {
        expectSuccess(await api.pushPoint(accessKey, "lb", { leaderboardItem: { name: `n${i}`, value: i } }))
      }
      expectSuccess(await api.pushPoint(accessKey, "one", { label: "only" }))
      const before = {
        xy: await api.entries(accessKey, "xy"),
        feed: await api.entries(accessKey, "feed"),
        lb: await api.entries(accessKey, "lb"),
        one: await api.entries(accessKey, "one")
      }
      // 30 days after these server-time entries: they sit in 1-hour buckets (tier 2), too young for tier 3.
      const passAt = new Date((Math.ceil(Date.now() / 1000) + 30 * DAY) * 1000).toISOString()
      await decimate(db.url, passAt)
      const y = (e: Entry) => (e.point as { y: number }).y
      expect(summary(await api.entries(accessKey, "xy"))).toEqual(summary(expectedAfter(before.xy, 3600, y)))
      expect(summary(await api.entries(accessKey, "feed"))).toEqual(
        summary(expectedAfter(before.feed, 3600, undefined))
      )
      expect(summary(await api.entries(accessKey, "lb"))).toEqual(summary(expectedAfter(before.lb, 3600, undefined)))
      expect(await api.entries(accessKey, "one")).toEqual(before.one)
      for (const stream of ["xy", "feed", "lb", "one"] as const) {
        const latest = await api.entries(accessKey, stream, "")
        expect(latest).toEqual([before[stream][before[stream].length - 1]])
      }
    }, 180_000)
  })
}
