/**
 * docs/api.md section 3, "Time": client timestamps and server-assigned ts, over HTTP.
 */
import { describe, expect, it } from "vitest"
import {
  backends,
  expectError,
  expectSuccess,
  expectUnchanged,
  nowSeconds,
  suiteName,
  timestampTypes,
  useServer
} from "./harness.js"
import { T } from "./widgetCases.js"

for (const backend of backends) {
  describe(suiteName("widget types", backend), () => {
    const ctx = useServer(backend)

    describe("client timestamps", () => {
      for (const type of timestampTypes) {
        it(`${type}: ts equals the timestamp; the same timestamp replaces the entry`, async () => {
          const { api } = ctx
          const { accessKey } = await api.setup({ s: type })
          expectSuccess(await api.pushPoint(accessKey, "s", { number: 1, timestamp: T }))
          expectSuccess(await api.pushPoint(accessKey, "s", { number: 2, timestamp: T + 0.25 }))
          expectSuccess(await api.pushPoint(accessKey, "s", { number: 3, timestamp: T, suffix: "x" }))
          expect(await api.entries(accessKey, "s")).toEqual([
            { ts: T, point: { number: 3, suffix: "x" } },
            { ts: T + 0.25, point: { number: 2 } }
          ])
        })
      }

      it("out-of-order timestamps are read back in ascending ts order; no since gives the highest ts", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "sparkline" })
        const past = Math.floor(nowSeconds()) - 3600
        expectSuccess(await api.pushPoint(accessKey, "s", { number: 1, timestamp: past }))
        expectSuccess(await api.pushPoint(accessKey, "s", { number: 2, timestamp: T }))
        expectSuccess(await api.pushPoint(accessKey, "s", 3))
        const all = await api.entries(accessKey, "s")
        expect(all.map((e) => e.point)).toEqual([{ number: 2 }, { number: 1 }, { number: 3 }])
        expect(all.map((e) => e.ts).slice(0, 2)).toEqual([T, past])
        expect(await api.entries(accessKey, "s", "")).toEqual([all[2]])
      })

      it("a server-assigned ts never goes below the stream's highest ts (a future client timestamp + 1 µs)", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        const future = Math.floor(nowSeconds()) + 3600
        expectSuccess(await api.pushPoint(accessKey, "s", { number: 1, timestamp: future }))
        expectSuccess(await api.pushPoint(accessKey, "s", 2))
        const all = await api.entries(accessKey, "s")
        expect(all.map((e) => e.point)).toEqual([{ number: 1 }, { number: 2 }])
        expect(all[0]!.ts).toBe(future)
        expect(Math.round((all[1]!.ts - future) * 1e6)).toBe(1)
        expect(await api.entries(accessKey, "s", "")).toEqual([all[1]])
      })

      it("a numeric-string timestamp is accepted", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        expectSuccess(await api.pushPoint(accessKey, "s", { number: 1, timestamp: String(T + 7) }))
        expect(await api.entries(accessKey, "s")).toEqual([{ ts: T + 7, point: { number: 1 } }])
      })

      it("an array push replaces entries with the same timestamps and keeps the others", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "sparkline" })
        expectSuccess(
          await api.pushPoint(accessKey, "s", [
            { number: 1, timestamp: T },
            { number: 2, timestamp: T + 1 }
          ])
        )
        expectSuccess(
          await api.pushPoint(accessKey, "s", [
            { number: 20, timestamp: T + 1 },
            { number: 30, timestamp: T + 2 }
          ])
        )
        expect(await api.entries(accessKey, "s")).toEqual([
          { ts: T, point: { number: 1 } },
          { ts: T + 1, point: { number: 20 } },
          { ts: T + 2, point: { number: 30 } }
        ])
      })

      it("a retried array push does not duplicate entries", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "line-graph" })
        const point = [
          { number: 93, timestamp: 1329205474 },
          { number: 35, timestamp: 1329206474 }
        ]
        expectSuccess(await api.pushPoint(accessKey, "s", point))
        expectSuccess(await api.pushPoint(accessKey, "s", point))
        expect(await api.entries(accessKey, "s")).toEqual([
          { ts: 1329205474, point: { number: 93 } },
          { ts: 1329206474, point: { number: 35 } }
        ])
      })

      it("an array push with timestamps not ascending stores nothing, even where some would be new", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "sparkline" })
        expectSuccess(await api.pushPoint(accessKey, "s", { number: 1, timestamp: T }))
        await expectUnchanged(api, accessKey, ["s"], async () =>
          expectError(
            await api.pushPoint(accessKey, "s", [
              { number: 5, timestamp: T + 100 },
              { number: 6, timestamp: T + 200 },
              { number: 7, timestamp: T + 150 }
            ]),
            400,
            "invalid_point"
          )
        )
      })

      it("server-assigned ts are strictly increasing, microsecond precision", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number", x: "xy-graph" })
        for (let i = 0; i < 30; i++) expectSuccess(await api.pushPoint(accessKey, "s", i))
        expectSuccess(
          await api.pushPoint(
            accessKey,
            "x",
            Array.from({ length: 50 }, (_, i) => ({ x: i, y: i }))
          )
        )
        for (const stream of ["s", "x"]) {
          const r = await api.read(accessKey, stream, "?since=0")
          const data = r.json.data as Array<{ ts: number }>
          for (let i = 1; i < data.length; i++) expect(data[i]!.ts).toBeGreaterThan(data[i - 1]!.ts)
          // At most six decimals in the JSON text.
          for (const m of r.text.matchAll(/"ts":\s*(-?[0-9.eE+-]+)/g)) expect(m[1]).toMatch(/^\d+(\.\d{1,6})?$/)
        }
        const xs = await api.points(accessKey, "x")
        expect(xs).toEqual(Array.from({ length: 50 }, (_, i) => ({ x: i, y: i })))
      })
    })
  })
}
