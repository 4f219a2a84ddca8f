/**
 * Push addresses and body labels (docs/api.md section 1), multi-stream pushes (section 5) and the export read
 * (section 6): ordering, `since`, `limit` paging, headers, URL-decoded stream names, key redaction in logs.
 */
import { describe, expect, it } from "vitest"
import {
  backends,
  type Entry,
  expectError,
  expectReadOk,
  expectSuccess,
  expectUnchanged,
  suiteName,
  useServer
} from "./harness.js"

for (const backend of backends) {
  describe(suiteName("push and read", backend), () => {
    // Request logging on, so the redaction check below has something to look at.
    const ctx = useServer(backend, { env: { DASHSTREAM_LOG_REQUESTS: "true" } })

    describe("push endpoint", () => {
      for (const path of ["/customSend", "/customSend/"]) {
        for (const contentType of [
          "application/json",
          "application/x-www-form-urlencoded",
          "application/x-www-form-urlencoded; charset=UTF-8",
          "text/plain",
          null
        ]) {
          it(`POST ${path} with ${contentType === null ? "no Content-Type" : contentType}: raw JSON is parsed`, async () => {
            const { api } = ctx
            const { accessKey } = await api.setup({ s: "text-feed" })
            const r = await api.pushRaw(
              JSON.stringify({ accessKey, streamName: "s", point: { title: "a=b&c", msg: "x+y%20z" } }),
              { path, contentType }
            )
            expectSuccess(r)
            expect(r.headers.get("content-type") ?? "").toMatch(/^application\/json/)
            expect(await api.points(accessKey, "s")).toEqual([{ title: "a=b&c", msg: "x+y%20z" }])
          })
        }
      }

      it("never redirects between /customSend and /customSend/", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        for (const path of ["/customSend", "/customSend/"]) {
          const r = await api.pushRaw(JSON.stringify({ accessKey, streamName: "s", point: 1 }), { path })
          expect(r.status).toBe(200)
          expect(r.headers.get("location")).toBeNull()
        }
      })

      it("a 200 means the data is readable right away", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        for (let i = 0; i < 20; i++) {
          expectSuccess(await api.pushPoint(accessKey, "s", i))
          expect(await api.latest(accessKey, "s")).toEqual({ number: i })
        }
      })
    })

    describe("multi-stream push", () => {
      it("stores every stream's point, arrays included", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({
          n: "number",
          map: "world-map",
          feed: "text-feed",
          lb: "leaderboard",
          spark: "sparkline"
        })
        expectSuccess(
          await api.push({
            accessKey,
            streams: [
              { streamName: "n", point: { number: 1 } },
              {
                streamName: "map",
                point: [
                  { latitude: 1.5, longitude: 2 },
                  { latitude: 3, longitude: 4 }
                ]
              },
              { streamName: "feed", point: { title: "T", msg: "M" } },
              { streamName: "lb", point: { leaderboard: [{ name: "a", value: 1 }] } },
              {
                streamName: "spark",
                point: [
                  { number: 1, timestamp: 1_700_000_000 },
                  { number: 2, timestamp: 1_700_000_001 }
                ]
              },
              { streamName: "n", point: { delta: 2 } }
            ]
          })
        )
        expect(await api.points(accessKey, "n")).toEqual([{ number: 1 }, { number: 3 }])
        expect(await api.points(accessKey, "map")).toEqual([
          { latitude: 1.5, longitude: 2 },
          { latitude: 3, longitude: 4 }
        ])
        expect(await api.points(accessKey, "feed")).toEqual([{ title: "T", msg: "M" }])
        expect(await api.points(accessKey, "lb")).toEqual([{ leaderboard: [{ name: "a", value: 1 }] }])
        expect(await api.entries(accessKey, "spark")).toEqual([
          { ts: 1_700_000_000, point: { number: 1 } },
          { ts: 1_700_000_001, point: { number: 2 } }
        ])
      })

      it("one invalid stream: nothing is stored (atomic), 400 with a path", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ a: "number", b: "text-feed", c: "xy-graph" })
        expectSuccess(await api.pushPoint(accessKey, "a", 1))
        await expectUnchanged(api, accessKey, ["a", "b", "c"], async () =>
          expectError(
            await api.push({
              accessKey,
              streams: [
                { streamName: "a", point: { delta: 5 } },
                { streamName: "b", point: { title: "T", msg: "M" } },
                {
                  streamName: "c",
                  point: [
                    { x: 1, y: 1 },
                    { x: 2, y: "high" }
                  ]
                }
              ]
            }),
            400,
            "invalid_point",
            "streams[2].point[1].y"
          )
        )
      })

      it("one unknown stream: 404 and nothing is stored", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ a: "number", b: "number" })
        await expectUnchanged(api, accessKey, ["a", "b"], async () =>
          expectError(
            await api.push({
              accessKey,
              streams: [
                { streamName: "a", point: 1 },
                { streamName: "missing", point: 1 },
                { streamName: "b", point: 1 }
              ]
            }),
            404,
            "stream_not_found"
          )
        )
      })

      it("a stream entry without streamName is 400 invalid_request with a path, nothing stored", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ a: "number" })
        await expectUnchanged(api, accessKey, ["a"], async () => {
          const r = await api.push({ accessKey, streams: [{ streamName: "a", point: 1 }, { point: 2 }] })
          expectError(r, 400, "invalid_request")
          expect(r.json.error.path, r.text).toMatch(/^streams\[1\]/)
        })
      })
    })

    describe("export read", () => {
      it("200 with message and data; Cache-Control: no-store; JSON content type", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        for (const query of ["", "?since=0"]) {
          const empty = await api.read(accessKey, "s", query)
          expectReadOk(empty)
          expect(empty.json).toEqual({ message: "Success!", data: [] })
          expect(empty.headers.get("cache-control")).toMatch(/\bno-store\b/)
          expect(empty.headers.get("content-type") ?? "").toMatch(/^application\/json/)
        }
        expectSuccess(await api.pushPoint(accessKey, "s", 3))
        const r = await api.read(accessKey, "s", "?since=0")
        expectReadOk(r)
        expect(r.headers.get("cache-control")).toMatch(/\bno-store\b/)
      })

      it("ascending ts; no since gives the latest; since=T is strictly greater", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "xy-graph" })
        for (let i = 0; i < 10; i++) expectSuccess(await api.pushPoint(accessKey, "s", { x: i, y: i * i }))
        const all = await api.entries(accessKey, "s")
        expect(all.map((e) => e.point)).toEqual(Array.from({ length: 10 }, (_, i) => ({ x: i, y: i * i })))
        expect(await api.entries(accessKey, "s", "")).toEqual([all[9]])
        for (const k of [0, 4, 8, 9]) {
          expect(await api.entries(accessKey, "s", `?since=${all[k]!.ts}`)).toEqual(all.slice(k + 1))
        }
        // A since just below an entry's ts includes it.
        expect(await api.entries(accessKey, "s", `?since=${(all[5]!.ts - 0.000001).toFixed(6)}`)).toEqual(all.slice(5))
        // A since far in the future gives nothing; since with a fraction and since=0.0 work.
        expect(await api.entries(accessKey, "s", `?since=${Math.ceil(all[9]!.ts) + 10}`)).toEqual([])
        expect(await api.entries(accessKey, "s", "?since=0.0")).toEqual(all)
      })

      it("since=0 returns an entry at ts 0, also pushed as timestamp 1e-7 or -0", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ zero: "number", tiny: "number", minus: "number", spark: "sparkline" })
        const raw = (streamName: string, point: string) =>
          api.pushRaw(`{"accessKey":${JSON.stringify(accessKey)},"streamName":"${streamName}","point":${point}}`)
        expectSuccess(await raw("zero", `{"number":1,"timestamp":0}`))
        expectSuccess(await raw("tiny", `{"number":2,"timestamp":1e-7}`))
        expectSuccess(await raw("minus", `{"number":3,"timestamp":-0}`))
        expectSuccess(await raw("spark", `[{"number":4,"timestamp":-0.0},{"number":5,"timestamp":0.5}]`))
        for (const query of ["?since=0", "?since=0.0", ""]) {
          expect(await api.entries(accessKey, "zero", query), query).toEqual([{ ts: 0, point: { number: 1 } }])
          expect(await api.entries(accessKey, "tiny", query), query).toEqual([{ ts: 0, point: { number: 2 } }])
          expect(await api.entries(accessKey, "minus", query), query).toEqual([{ ts: 0, point: { number: 3 } }])
        }
        expect(await api.entries(accessKey, "spark")).toEqual([
          { ts: 0, point: { number: 4 } },
          { ts: 0.5, point: { number: 5 } }
        ])
        // The body says 0, never -0.
        for (const stream of ["minus", "spark"]) {
          expect((await api.read(accessKey, stream, "?since=0")).text).not.toMatch(/"ts":-/)
        }
        // The same ts replaces: -0 and 0 are one entry.
        expectSuccess(await raw("minus", `{"number":6,"timestamp":0}`))
        expect(await api.entries(accessKey, "minus")).toEqual([{ ts: 0, point: { number: 6 } }])
      })

      it("since relative to client timestamps", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "sparkline" })
        const point = Array.from({ length: 5 }, (_, i) => ({ number: i, timestamp: 1_500_000_000 + i * 0.5 }))
        expectSuccess(await api.pushPoint(accessKey, "s", point))
        expect((await api.entries(accessKey, "s", "?since=1500000001")).map((e) => e.ts)).toEqual([
          1_500_000_001.5, 1_500_000_002
        ])
        expect((await api.entries(accessKey, "s", "?since=1500000000.75")).map((e) => e.ts)).toEqual([
          1_500_000_001, 1_500_000_001.5, 1_500_000_002
        ])
      })

      it("limit returns the N oldest matching entries; paging forward by the last ts reads everything once", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "sparkline" })
        const point = Array.from({ length: 25 }, (_, i) => ({ number: i, timestamp: 1_600_000_000 + i }))
        expectSuccess(await api.pushPoint(accessKey, "s", point))
        const all = await api.entries(accessKey, "s")
        expect(all).toHaveLength(25)
        const pages: Array<Array<Entry>> = []
        let since = 0
        for (let guard = 0; guard < 10; guard++) {
          const page = await api.entries(accessKey, "s", `?since=${since}&limit=10`)
          pages.push(page)
          if (page.length === 0) break
          since = page[page.length - 1]!.ts
        }
        expect(pages.map((p) => p.length)).toEqual([10, 10, 5, 0])
        expect(pages.flat()).toEqual(all)
        expect(await api.entries(accessKey, "s", "?since=0&limit=1")).toEqual([all[0]])
        expect(await api.entries(accessKey, "s", "?limit=100&since=0")).toEqual(all)
      })

      it("URL-decodes path segments: %20 and non-ASCII stream names", async () => {
        const { api } = ctx
        const names = ["my stream", "café ✓", "a+b", "50% off", "q?x=1#y"]
        const account = await api.createAccount()
        for (const n of names) await api.createWidget(account.id, n, "label")
        for (const n of names) {
          expectSuccess(await api.pushPoint(account.accessKey, n, { label: n }))
          expect(await api.latest(account.accessKey, n), n).toEqual({ label: n })
        }
        const r = await api.fetch(`/api/v2/${account.accessKey}/datastream/my%20stream?since=0`)
        expectReadOk(r)
        expect(r.json.data.map((e: Entry) => e.point)).toEqual([{ label: "my stream" }])
        // "+" in a path segment is a plus, not a space.
        const plus = await api.fetch(`/api/v2/${account.accessKey}/datastream/a+b`)
        expect(plus.json.data.map((e: Entry) => e.point)).toEqual([{ label: "a+b" }])
      })

      it("the access key never appears in the server's logs", async () => {
        const { api, server } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        const bogus = "bogus-key-that-must-not-be-logged-7f3a"
        expectSuccess(await api.pushPoint(accessKey, "s", 1))
        await api.read(accessKey, "s", "?since=0")
        await api.read(accessKey, "nope")
        await api.read(bogus, "s")
        await api.pushPoint(bogus, "s", 1)
        await api.pushRaw(`{"accessKey": "${bogus}", "streamName": `)
        await new Promise((r) => setTimeout(r, 300))
        const out = server.output()
        for (const key of [...api.keys, bogus]) expect(out.includes(key), `key ${key} found in logs`).toBe(false)
      })
    })
  })
}
