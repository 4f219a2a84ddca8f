/**
 * docs/api.md section 12: `GET /metrics` of the real `dashstream serve`, scraped after pushes and parsed as the
 * Prometheus text format. The storage's group commit reports to the same registry, so the points pushed show up.
 */
import { describe, expect, it } from "vitest"
import { parseExposition, valueOf, type Exposition } from "../../../http/test/support/exposition.js"
import { backends, expectSuccess, suiteName, useServer } from "./harness.js"

for (const backend of backends) {
  describe(suiteName("GET /metrics", backend), () => {
    const ctx = useServer(backend)

    const scrape = async (): Promise<{ text: string; exposition: Exposition }> => {
      const r = await ctx.api.fetch("/metrics")
      expect(r.status, r.text).toBe(200)
      expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
      return { text: r.text, exposition: parseExposition(r.text) }
    }

    it("counts points stored, group commits and pushes, and names no key or stream", async () => {
      const account = await ctx.api.setup({ "metrics-spark-stream": "sparkline", "metrics-number-stream": "number" })
      const before = (await scrape()).exposition
      // 10 points in one push, 5 single pushes at once, a delta, a clear (no point) and a push that fails alone.
      const array = Array.from({ length: 10 }, (_, i) => ({ number: i, timestamp: 1_700_000_000 + i }))
      expectSuccess(await ctx.api.pushPoint(account.accessKey, "metrics-spark-stream", array))
      const singles = await Promise.all(
        Array.from({ length: 5 }, (_, i) => ctx.api.pushPoint(account.accessKey, "metrics-number-stream", i))
      )
      for (const r of singles) expectSuccess(r)
      expectSuccess(await ctx.api.pushPoint(account.accessKey, "metrics-number-stream", { delta: 2 }))
      expectSuccess(
        await ctx.api.push({ accessKey: account.accessKey, streamName: "metrics-spark-stream", command: "clear" })
      )
      expect((await ctx.api.pushPoint(account.accessKey, "metrics-spark-stream", { number: "x" })).status).toBe(400)

      const { text, exposition: after } = await scrape()
      const delta = (name: string, labels: Record<string, string> = {}) =>
        valueOf(after, name, labels) - valueOf(before, name, labels)
      expect(delta("dashstream_points_stored_total")).toBe(16)
      // Every successful push is one call of some group; the failed one is refused before storage.
      expect(delta("dashstream_group_commit_calls_sum")).toBe(8)
      expect(delta("dashstream_group_commit_calls_count")).toBeGreaterThanOrEqual(1)
      expect(delta("dashstream_group_commit_calls_count")).toBeLessThanOrEqual(8)
      const pushes = { route: "/customSend", method: "POST" }
      expect(delta("dashstream_http_requests_total", { ...pushes, status: "200" })).toBe(8)
      expect(delta("dashstream_http_requests_total", { ...pushes, status: "400" })).toBe(1)
      expect(delta("dashstream_push_errors_total", { code: "invalid_point" })).toBe(1)
      expect(valueOf(after, "process_cpu_seconds_total")).toBeGreaterThan(0)

      for (const secret of [account.accessKey, account.id, account.name, "metrics-spark-stream", "metrics-number"]) {
        expect(text).not.toContain(secret)
      }
    })
  })
}
