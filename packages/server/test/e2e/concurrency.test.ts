/**
 * docs/api.md section 3: server-assigned `ts` keep the `since` cursor safe under concurrent writes, and concurrent
 * deltas are never lost.
 */
import { describe, expect, it } from "vitest"
import { type Api, backends, type Entry, expectSuccess, pool, suiteName, useServer } from "./harness.js"

/**
 * Pushes `points` to `stream` with `inFlight` requests at a time while a reader polls with
 * `since=<last ts read>`; returns everything the reader saw, in order, and the final `since=0` read.
 */
const pushWhilePolling = async (
  api: Api,
  accessKey: string,
  stream: string,
  points: ReadonlyArray<unknown>,
  inFlight: number
): Promise<{ polled: Array<Entry>; all: Array<Entry>; polls: number }> => {
  let writing = true
  const polled: Array<Entry> = []
  let polls = 0
  const reader = (async () => {
    let since = 0
    let finalRound = false
    for (;;) {
      const page = await api.entries(accessKey, stream, `?since=${since}`)
      polls++
      polled.push(...page)
      if (page.length > 0) since = page[page.length - 1]!.ts
      if (finalRound) return
      if (!writing) finalRound = true
    }
  })()
  try {
    const results = await pool(
      inFlight,
      points.map((point) => () => api.pushPoint(accessKey, stream, point))
    )
    for (const r of results) expectSuccess(r)
  } finally {
    writing = false
  }
  await reader
  return { polled, all: await api.entries(accessKey, stream), polls }
}

for (const backend of backends) {
  describe(suiteName("concurrency", backend), () => {
    const ctx = useServer(backend)

    it("cursor safety: one writer, one poller with since=<last ts>: every entry exactly once, in order", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ s: "number" })
      const { polled, all, polls } = await pushWhilePolling(
        api,
        accessKey,
        "s",
        Array.from({ length: 300 }, (_, i) => i),
        1
      )
      expect(all).toHaveLength(300)
      expect(all.map((e) => e.point)).toEqual(Array.from({ length: 300 }, (_, i) => ({ number: i })))
      expect(polled).toEqual(all)
      expect(polls).toBeGreaterThan(2)
    }, 120_000)

    it("cursor safety with 8 pushes in flight: the poller still sees every entry exactly once, in order", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ s: "text-feed" })
      const { polled, all } = await pushWhilePolling(
        api,
        accessKey,
        "s",
        Array.from({ length: 300 }, (_, i) => ({ title: `t${i}`, msg: "m" })),
        8
      )
      expect(all).toHaveLength(300)
      expect(new Set(all.map((e) => (e.point as { title: string }).title)).size).toBe(300)
      expect(polled).toEqual(all)
    }, 120_000)

    it("500 concurrent {delta: 1} pushes end at exactly 500, one entry per push", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ s: "number", other: "number" })
      const results = await Promise.all(Array.from({ length: 500 }, () => api.pushPoint(accessKey, "s", { delta: 1 })))
      for (const r of results) expectSuccess(r)
      expect(await api.latest(accessKey, "s")).toEqual({ number: 500 })
      const all = await api.entries(accessKey, "s")
      // Deltas are serialised: in ts order the numbers are exactly 1..500.
      expect(all.map((e) => e.point)).toEqual(Array.from({ length: 500 }, (_, i) => ({ number: i + 1 })))
      expect(await api.entries(accessKey, "other")).toEqual([])
    }, 120_000)

    it("concurrent deltas on several streams and accounts do not interfere", async () => {
      const { api } = ctx
      const a = await api.setup({ x: "dial", y: "sparkline" })
      const b = await api.setup({ x: "dial" })
      const tasks = Array.from({ length: 300 }, (_, i) => {
        const [key, stream] = [
          [a.accessKey, "x"],
          [a.accessKey, "y"],
          [b.accessKey, "x"]
        ][i % 3]!
        return api.pushPoint(key!, stream!, { delta: 2 })
      })
      for (const r of await Promise.all(tasks)) expectSuccess(r)
      expect(await api.latest(a.accessKey, "x")).toEqual({ number: 200 })
      expect(await api.latest(a.accessKey, "y")).toEqual({ number: 200 })
      expect(await api.latest(b.accessKey, "x")).toEqual({ number: 200 })
    }, 120_000)
  })
}
