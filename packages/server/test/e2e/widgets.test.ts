/**
 * docs/api.md section 3 (what a push stores) and section 4 (clearing), widget type by widget type, over HTTP. Client
 * timestamps: widgets.timestamps.test.ts; the item builders and event types: widgets.builders.test.ts.
 */
import { describe, expect, it } from "vitest"
import {
  backends,
  clearableTypes,
  emptyPointTypes,
  expectError,
  expectSuccess,
  expectUnchanged,
  nowSeconds,
  numberTypes,
  suiteName,
  timestampTypes,
  useServer,
  type WidgetType
} from "./harness.js"
import { storeCases } from "./widgetCases.js"
import { emptyForms, invalidPoints, samplePoint } from "./widgetPoints.js"

for (const backend of backends) {
  describe(suiteName("widget types", backend), () => {
    const ctx = useServer(backend)

    describe("accepted points are stored as the contract says", () => {
      for (const type of Object.keys(storeCases) as Array<WidgetType>) {
        for (const c of storeCases[type]) {
          it(`${type}: ${c.title}`, async () => {
            const { api } = ctx
            const { accessKey } = await api.setup({ s: type })
            const before = nowSeconds()
            expectSuccess(await api.pushPoint(accessKey, "s", c.point))
            const all = await api.entries(accessKey, "s")
            expect(all.map((e) => e.point)).toEqual(c.stored)
            expect(await api.latest(accessKey, "s")).toEqual(c.stored[c.stored.length - 1])
            // ts is the client timestamp where the type takes one, otherwise the receive time.
            const sent = Array.isArray(c.point) ? c.point : [c.point]
            expect(all).toHaveLength(sent.length)
            sent.forEach((p, i) => {
              const stamp =
                timestampTypes.includes(type) && typeof p === "object" && p !== null && "timestamp" in p
                  ? Number((p as { timestamp: unknown }).timestamp)
                  : undefined
              if (stamp !== undefined) expect(all[i]!.ts).toBe(stamp)
              else {
                expect(all[i]!.ts).toBeGreaterThanOrEqual(before - 5)
                expect(all[i]!.ts).toBeLessThanOrEqual(nowSeconds() + 5)
              }
            })
          })
        }
      }
    })

    describe("invalid points are rejected with 400 invalid_point and store nothing", () => {
      for (const type of Object.keys(invalidPoints) as Array<WidgetType>) {
        for (const [title, point] of invalidPoints[type]) {
          it(`${type}: ${title}`, async () => {
            const { api } = ctx
            const { accessKey } = await api.setup({ s: type })
            expectSuccess(await api.pushPoint(accessKey, "s", samplePoint[type]))
            await expectUnchanged(api, accessKey, ["s"], async () => {
              const r = await api.pushPoint(accessKey, "s", point)
              expectError(r, 400, "invalid_point")
              // Validation errors point into the request body.
              expect(r.json.error.path, r.text).toMatch(/^point\b/)
            })
          })
        }
      }

      it("number: a JSON number that overflows to Infinity (1e400)", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        await expectUnchanged(api, accessKey, ["s"], async () =>
          expectError(
            await api.pushRaw(`{"accessKey":${JSON.stringify(accessKey)},"streamName":"s","point":1e400}`),
            400,
            "invalid_point"
          )
        )
      })

      it("leaderboard: the error path points at the bad value", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "leaderboard" })
        const point = {
          leaderboard: [
            { name: "a", value: 1 },
            { name: "b", value: "abc" }
          ]
        }
        expectError(await api.pushPoint(accessKey, "s", point), 400, "invalid_point", "point.leaderboard[1].value")
      })
    })

    describe("delta", () => {
      it("adds to the latest number, starting at 0, one entry per push", async () => {
        const { api } = ctx
        for (const type of ["number", "dial", "sparkline"] as const) {
          const { accessKey } = await api.setup({ s: type })
          for (const delta of [2, 3, -10, 0.5, "1.5"]) expectSuccess(await api.pushPoint(accessKey, "s", { delta }))
          expect(await api.points(accessKey, "s")).toEqual([
            { number: 2 },
            { number: 5 },
            { number: -5 },
            { number: -4.5 },
            { number: -3 }
          ])
        }
      })

      it("carries prefix and suffix over unless the push gives them", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        expectSuccess(await api.pushPoint(accessKey, "s", { number: 10, prefix: "$", suffix: "k" }))
        expectSuccess(await api.pushPoint(accessKey, "s", { delta: 1 }))
        expect(await api.latest(accessKey, "s")).toEqual({ number: 11, prefix: "$", suffix: "k" })
        expectSuccess(await api.pushPoint(accessKey, "s", { delta: 1, prefix: "€" }))
        expect(await api.latest(accessKey, "s")).toEqual({ number: 12, prefix: "€", suffix: "k" })
        expectSuccess(await api.pushPoint(accessKey, "s", { delta: -2, suffix: "m" }))
        expect(await api.latest(accessKey, "s")).toEqual({ number: 10, prefix: "€", suffix: "m" })
      })

      it("follows a plain number push", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "vertical-bar" })
        expectSuccess(await api.pushPoint(accessKey, "s", 100))
        expectSuccess(await api.pushPoint(accessKey, "s", { delta: -1 }))
        expect(await api.points(accessKey, "s")).toEqual([{ number: 100 }, { number: 99 }])
      })

      it("starts from 0 again after an empty-point clear", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        expectSuccess(await api.pushPoint(accessKey, "s", { number: 10, prefix: "$" }))
        expectSuccess(await api.pushPoint(accessKey, "s", null))
        expect(await api.entries(accessKey, "s")).toEqual([])
        expectSuccess(await api.pushPoint(accessKey, "s", { delta: 1 }))
        expect(await api.points(accessKey, "s")).toEqual([{ number: 1 }])
      })

      it("starts from 0 again after a clear command", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "line-graph" })
        expectSuccess(await api.pushPoint(accessKey, "s", 10))
        expectSuccess(await api.push({ accessKey, streamName: "s", command: "clear" }))
        expectSuccess(await api.pushPoint(accessKey, "s", { delta: 4 }))
        expect(await api.points(accessKey, "s")).toEqual([{ number: 4 }])
      })
    })

    describe("clear command", () => {
      for (const type of clearableTypes) {
        it(`${type}: deletes every stored entry`, async () => {
          const { api } = ctx
          const { accessKey } = await api.setup({ s: type, other: type })
          for (let i = 0; i < 3; i++) expectSuccess(await api.pushPoint(accessKey, "s", samplePoint[type]))
          expectSuccess(await api.pushPoint(accessKey, "other", samplePoint[type]))
          expectSuccess(await api.push({ accessKey, streamName: "s", command: "clear" }))
          expect(await api.entries(accessKey, "s")).toEqual([])
          expect(await api.entries(accessKey, "s", "")).toEqual([])
          // Only that stream.
          expect(await api.entries(accessKey, "other")).toHaveLength(1)
          // Clearing an empty stream is fine too; new pushes land after it.
          expectSuccess(await api.push({ accessKey, streamName: "s", command: "clear" }))
          expectSuccess(await api.pushPoint(accessKey, "s", samplePoint[type]))
          expect(await api.entries(accessKey, "s")).toHaveLength(1)
        })
      }

      for (const type of emptyPointTypes) {
        it(`${type}: clear is 400 unsupported_command, telling to push an empty point`, async () => {
          const { api } = ctx
          const { accessKey } = await api.setup({ s: type })
          expectSuccess(await api.pushPoint(accessKey, "s", samplePoint[type]))
          await expectUnchanged(api, accessKey, ["s"], async () => {
            const r = await api.push({ accessKey, streamName: "s", command: "clear" })
            expectError(r, 400, "unsupported_command")
            expect(r.json.error.message).toMatch(/empty/i)
          })
        })
      }
    })

    describe("empty point clears", () => {
      for (const type of emptyPointTypes) {
        for (const [title, empty] of emptyForms(type)) {
          it(`${type}: ${title}`, async () => {
            const { api } = ctx
            const { accessKey } = await api.setup({ s: type, other: type })
            expectSuccess(await api.pushPoint(accessKey, "s", samplePoint[type]))
            expectSuccess(await api.pushPoint(accessKey, "s", samplePoint[type]))
            expectSuccess(await api.pushPoint(accessKey, "other", samplePoint[type]))
            expectSuccess(await api.pushPoint(accessKey, "s", empty))
            expect(await api.entries(accessKey, "s")).toEqual([])
            expect(await api.entries(accessKey, "s", "")).toEqual([])
            expect(await api.entries(accessKey, "other")).toHaveLength(1)
          })
        }
      }
    })

    it("the number family accepts every numeric form (sanity across the four types)", async () => {
      const { api } = ctx
      for (const type of numberTypes) {
        const { accessKey } = await api.setup({ s: type })
        for (const p of [1, "2", { number: 3 }, { delta: 1 }]) expectSuccess(await api.pushPoint(accessKey, "s", p))
        expect(await api.points(accessKey, "s")).toEqual([{ number: 1 }, { number: 2 }, { number: 3 }, { number: 4 }])
      }
    })
  })
}
