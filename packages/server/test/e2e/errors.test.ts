/**
 * docs/api.md section 5: every status and error code, with the exact `{"error": {"code", "message", "path"?}}` body,
 * and that a rejected request never changes stored data.
 */
import { describe, expect, it } from "vitest"
import {
  backends,
  expectAnyError,
  expectError,
  expectSuccess,
  expectUnchanged,
  nodeRequest,
  type Reply,
  suiteName,
  useServer
} from "./harness.js"

const MiB = 1024 * 1024

/** A label push whose JSON body is exactly `size` bytes long. */
const labelBodyOfSize = (accessKey: string, size: number): string => {
  const skeleton = JSON.stringify({ accessKey, streamName: "s", point: { label: "" } })
  const body = JSON.stringify({ accessKey, streamName: "s", point: { label: "x".repeat(size - skeleton.length) } })
  expect(Buffer.byteLength(body)).toBe(size)
  return body
}

for (const backend of backends) {
  describe(suiteName("errors", backend), () => {
    const ctx = useServer(backend)

    describe("400 invalid_json", () => {
      for (const [title, body] of [
        ["truncated object", '{"accessKey": "k", "streamName": '],
        ["not JSON at all", "hello"],
        ["empty body", ""],
        ["Python NaN token", '{"accessKey": "K", "streamName": "s", "point": {"number": NaN}}'],
        ["Python Infinity token", '{"accessKey": "K", "streamName": "s", "point": Infinity}'],
        ["form-encoded fields", "accessKey=K&streamName=s&point=1"]
      ] as const) {
        it(title, async () => {
          const { api } = ctx
          const { accessKey } = await api.setup({ s: "number" })
          await expectUnchanged(api, accessKey, ["s"], async () =>
            expectError(await api.pushRaw(body.replace('"K"', JSON.stringify(accessKey))), 400, "invalid_json")
          )
        })
      }
    })

    describe("400 invalid_request", () => {
      it("missing accessKey", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        await expectUnchanged(api, accessKey, ["s"], async () =>
          expectError(await api.push({ streamName: "s", point: 1 }), 400, "invalid_request")
        )
      })

      it("missing streamName", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        expectError(await api.push({ accessKey, point: 1 }), 400, "invalid_request")
      })

      it("both point and command", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "sparkline" })
        expectSuccess(await api.pushPoint(accessKey, "s", 1))
        await expectUnchanged(api, accessKey, ["s"], async () =>
          expectError(
            await api.push({ accessKey, streamName: "s", point: 2, command: "clear" }),
            400,
            "invalid_request"
          )
        )
      })

      it("missing point (and no command)", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        expectSuccess(await api.pushPoint(accessKey, "s", 1))
        await expectUnchanged(api, accessKey, ["s"], async () =>
          expectError(await api.push({ accessKey, streamName: "s" }), 400, "invalid_request")
        )
      })

      it("body that is JSON but not an object", async () => {
        const { api } = ctx
        for (const body of ["[]", "42", '"text"', "null", "true"]) {
          expectError(await api.pushRaw(body), 400, "invalid_request")
        }
      })

      it("accessKey or streamName of the wrong type", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        expectError(await api.push({ accessKey: 123, streamName: "s", point: 1 }), 400, "invalid_request")
        expectError(await api.push({ accessKey, streamName: ["s"], point: 1 }), 400, "invalid_request")
      })

      it("epoint (encrypted point) is not supported, and the message says so", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        await expectUnchanged(api, accessKey, ["s"], async () => {
          const r = await api.push({ accessKey, streamName: "s", epoint: "c2VjcmV0:aXY=" })
          expectError(r, 400, "invalid_request")
          expect(r.json.error.message).toMatch(/epoint/i)
        })
      })

      it("epoint inside a multi-stream push is rejected too, storing nothing", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ a: "number", b: "number" })
        await expectUnchanged(api, accessKey, ["a", "b"], async () => {
          const r = await api.push({
            accessKey,
            streams: [
              { streamName: "a", point: 1 },
              { streamName: "b", epoint: "c2VjcmV0:aXY=" }
            ]
          })
          expectError(r, 400, "invalid_request")
          expect(r.json.error.message).toMatch(/epoint/i)
        })
      })
    })

    describe("400 invalid_point", () => {
      it("multi-stream validation errors carry the path into the body", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ n: "number", lb: "leaderboard" })
        await expectUnchanged(api, accessKey, ["n", "lb"], async () =>
          expectError(
            await api.push({
              accessKey,
              streams: [
                { streamName: "n", point: 1 },
                { streamName: "lb", point: { leaderboard: [{ name: "a", value: "lots" }] } }
              ]
            }),
            400,
            "invalid_point",
            "streams[1].point.leaderboard[0].value"
          )
        )
      })

      it("a delta whose result is not finite: nothing stored, never {number: null}", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ n: "number", d: "dial" })
        expectSuccess(await api.pushPoint(accessKey, "n", { delta: 1e308 }))
        await expectUnchanged(api, accessKey, ["n", "d"], async () => {
          expectError(await api.pushPoint(accessKey, "n", { delta: 1e308 }), 400, "invalid_point", "point.delta")
          expectError(await api.pushPoint(accessKey, "n", { delta: "1e308" }), 400, "invalid_point")
          // Two deltas of one multi-stream push overflow together: all or nothing.
          expectError(
            await api.push({
              accessKey,
              streams: [
                { streamName: "d", point: { delta: -1e308 } },
                { streamName: "d", point: { delta: -1e308 } }
              ]
            }),
            400,
            "invalid_point",
            "streams[1].point.delta"
          )
        })
        expect(await api.points(accessKey, "n")).toEqual([{ number: 1e308 }])
        expect(await api.points(accessKey, "d")).toEqual([])
      })

      it("a point of another widget type", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "text-feed" })
        await expectUnchanged(api, accessKey, ["s"], async () =>
          expectError(await api.pushPoint(accessKey, "s", { number: 1 }), 400, "invalid_point")
        )
      })
    })

    describe("400 unsupported_command", () => {
      it("unknown command", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "sparkline" })
        expectSuccess(await api.pushPoint(accessKey, "s", 1))
        await expectUnchanged(api, accessKey, ["s"], async () =>
          expectError(await api.push({ accessKey, streamName: "s", command: "explode" }), 400, "unsupported_command")
        )
      })

      it("clear on a number widget", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        expectSuccess(await api.pushPoint(accessKey, "s", 1))
        await expectUnchanged(api, accessKey, ["s"], async () => {
          const r = await api.push({ accessKey, streamName: "s", command: "clear" })
          expectError(r, 400, "unsupported_command")
          expect(r.json.error.message).toMatch(/empty/i)
        })
      })
    })

    describe("400 invalid_since", () => {
      for (const since of ["-1", "abc", "-0.5", "1e", "NaN", "Infinity", "0x10", "0b1", "0o7", "1_0", "+5", " 5"]) {
        it(`since=${since}`, async () => {
          const { api } = ctx
          const { accessKey } = await api.setup({ s: "number" })
          expectError(await api.read(accessKey, "s", `?since=${since}`), 400, "invalid_since")
        })
      }

      it("limit outside 1..100000 is a 400", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        for (const limit of ["0", "-1", "100001", "abc", "0x10", "1e2", "1.0"]) {
          const r = await api.read(accessKey, "s", `?since=0&limit=${limit}`)
          expectAnyError(r, 400)
        }
        expect((await api.read(accessKey, "s", "?since=0&limit=100000")).status).toBe(200)
        expect((await api.read(accessKey, "s", "?since=0&limit=1")).status).toBe(200)
      })
    })

    describe("error messages quote at most about 100 characters of a name", () => {
      it("a huge stream name or account id is not echoed whole", async () => {
        const { api } = ctx
        const { accessKey, id } = await api.setup({ s: "number" })
        const huge = "n".repeat(900_000)
        const checks: Array<Reply> = [
          await api.pushPoint(accessKey, huge, 1),
          await api.push({
            accessKey,
            streams: [
              { streamName: "s", point: 1 },
              { streamName: huge, point: 1 }
            ]
          }),
          await api.read(accessKey, "r".repeat(6_000)),
          await api.admin("POST", `/admin/accounts/${id}/widgets`, { streamName: huge, type: "number" }),
          await api.admin("DELETE", `/admin/accounts/${id}/widgets/${"d".repeat(6_000)}`),
          await api.admin("GET", `/admin/accounts/${"i".repeat(6_000)}/widgets`)
        ]
        for (const r of checks) {
          expect(r.status, r.text.slice(0, 300)).toBeGreaterThanOrEqual(400)
          expect(r.status).toBeLessThan(500)
          expect(r.json.error.message.length, r.json.error.message.slice(0, 300)).toBeLessThan(250)
        }
      })

      it("an account name is at most 200 characters", async () => {
        const { api } = ctx
        const r = await api.admin("POST", "/admin/accounts", { name: "a".repeat(201) })
        expectError(r, 400, "invalid_request", "name")
        expect((await api.admin("POST", "/admin/accounts", { name: "a".repeat(900_000) })).status).toBe(400)
        const ok = await api.admin("POST", "/admin/accounts", { name: "é".repeat(200) })
        expect(ok.status, ok.text).toBe(201)
      })
    })

    describe("403 forbidden", () => {
      it("unknown key on push, for any command, storing nothing", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "sparkline" })
        expectSuccess(await api.pushPoint(accessKey, "s", 1))
        await expectUnchanged(api, accessKey, ["s"], async () => {
          expectError(await api.pushPoint(accessKey + "x", "s", 2), 403, "forbidden")
          expectError(await api.pushPoint("no-such-key", "s", 2), 403, "forbidden")
          expectError(await api.push({ accessKey: "no-such-key", streamName: "s", command: "clear" }), 403, "forbidden")
          expectError(
            await api.push({ accessKey: "no-such-key", streams: [{ streamName: "s", point: 3 }] }),
            403,
            "forbidden"
          )
        })
      })

      it("unknown key on read", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        expectSuccess(await api.pushPoint(accessKey, "s", 1))
        expectError(await api.read("no-such-key", "s", "?since=0"), 403, "forbidden")
        expectError(await api.read(accessKey.slice(0, -1), "s"), 403, "forbidden")
        expectError(await api.read("no-such-key", "no-such-stream"), 403, "forbidden")
      })

      it("an empty access key", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        await expectUnchanged(api, accessKey, ["s"], async () => {
          const r = await api.pushPoint("", "s", 1)
          expect([400, 403], r.text).toContain(r.status)
          expectError(r, r.status, r.status === 403 ? "forbidden" : "invalid_request")
        })
      })
    })

    describe("404 stream_not_found", () => {
      it("unknown stream on push and read", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        expectError(await api.pushPoint(accessKey, "nope", 1), 404, "stream_not_found")
        expectError(await api.push({ accessKey, streamName: "nope", command: "clear" }), 404, "stream_not_found")
        expectError(await api.read(accessKey, "nope", "?since=0"), 404, "stream_not_found")
        expectError(await api.read(accessKey, "nope"), 404, "stream_not_found")
      })

      it("a stream of another account: no cross-account reads or pushes", async () => {
        const { api } = ctx
        const alice = await api.setup({ secret: "number", shared: "number" })
        const bob = await api.setup({ shared: "number" })
        expectSuccess(await api.pushPoint(alice.accessKey, "secret", 41))
        expectSuccess(await api.pushPoint(alice.accessKey, "shared", 1))
        expectSuccess(await api.pushPoint(bob.accessKey, "shared", 2))
        await expectUnchanged(api, alice.accessKey, ["secret", "shared"], async () => {
          expectError(await api.read(bob.accessKey, "secret", "?since=0"), 404, "stream_not_found")
          expectError(await api.pushPoint(bob.accessKey, "secret", 666), 404, "stream_not_found")
          expectError(
            await api.push({ accessKey: bob.accessKey, streamName: "secret", command: "clear" }),
            404,
            "stream_not_found"
          )
          expectError(
            await api.push({ accessKey: bob.accessKey, streams: [{ streamName: "secret", point: 1 }] }),
            404,
            "stream_not_found"
          )
        })
        // Same stream name in two accounts: separate data.
        expect(await api.points(alice.accessKey, "shared")).toEqual([{ number: 1 }])
        expect(await api.points(bob.accessKey, "shared")).toEqual([{ number: 2 }])
      })
    })

    describe("404 not_found and 405 method_not_allowed", () => {
      it("unknown paths are 404 not_found", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        for (const path of [
          "/nope",
          "/api/v1/" + accessKey + "/datastream/s",
          "/api/v2/" + accessKey + "/datastreams/s",
          "/api/v2/" + accessKey,
          "/customSend/extra",
          "/v2/" + accessKey + "/datastream/s"
        ]) {
          expectError(await api.fetch(path), 404, "not_found")
        }
        expectError(await api.fetch("/nope", { method: "POST", body: "{}" }), 404, "not_found")
      })

      it("wrong method on a known path is 405 method_not_allowed", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        expectError(await api.fetch("/customSend"), 405, "method_not_allowed")
        expectError(await api.fetch("/customSend/"), 405, "method_not_allowed")
        expectError(await api.fetch("/customSend", { method: "PUT", body: "{}" }), 405, "method_not_allowed")
        expectError(await api.fetch("/customSend/", { method: "DELETE" }), 405, "method_not_allowed")
        expectError(
          await api.fetch(`/api/v2/${accessKey}/datastream/s`, { method: "POST", body: "{}" }),
          405,
          "method_not_allowed"
        )
        expectError(
          await api.fetch(`/api/v2/${accessKey}/datastream/s`, { method: "DELETE" }),
          405,
          "method_not_allowed"
        )
      })
    })

    describe("413 payload_too_large", () => {
      it("a body of 1 MiB + 1 byte is refused; exactly 1 MiB is accepted", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "label" })
        await expectUnchanged(api, accessKey, ["s"], async () =>
          expectError(await api.pushRaw(labelBodyOfSize(accessKey, MiB + 1)), 413, "payload_too_large")
        )
        expectSuccess(await api.pushRaw(labelBodyOfSize(accessKey, MiB)))
        expect(((await api.latest(accessKey, "s")) as { label: string }).label).toHaveLength(
          MiB - JSON.stringify({ accessKey, streamName: "s", point: { label: "" } }).length
        )
      })

      it("a chunked body over 1 MiB (no Content-Length) is refused", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "label" })
        const body = Buffer.from(labelBodyOfSize(accessKey, MiB + 64 * 1024))
        const chunks = Array.from({ length: Math.ceil(body.length / 65536) }, (_, i) =>
          body.subarray(i * 65536, (i + 1) * 65536)
        )
        await expectUnchanged(api, accessKey, ["s"], async () => {
          const r = await nodeRequest(api.baseUrl, {
            method: "POST",
            path: "/customSend",
            headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
            chunks
          }).catch((e: Error) => ({ status: -1, headers: {}, text: e.message }))
          // The server may close the connection before the client finished writing; a 413 must be what it said.
          if (r.status !== -1) {
            expect(r.status, r.text).toBe(413)
            expect(JSON.parse(r.text).error.code).toBe("payload_too_large")
          }
        })
      })

      it("257 streams in one push are refused; 256 are accepted", async () => {
        const { api } = ctx
        const names = Array.from({ length: 257 }, (_, i) => `s${i}`)
        const account = await api.createAccount()
        for (const n of names) await api.createWidget(account.id, n, "number")
        const { accessKey } = account
        const streams = names.map((streamName, i) => ({ streamName, point: i }))
        const r = await api.push({ accessKey, streams })
        expectError(r, 413, "payload_too_large")
        const reads = await Promise.all(names.map((n) => api.entries(accessKey, n)))
        expect(reads.every((d) => d.length === 0)).toBe(true)
        expectSuccess(await api.push({ accessKey, streams: streams.slice(0, 256) }))
        expect(await api.points(accessKey, "s255")).toEqual([{ number: 255 }])
        expect(await api.entries(accessKey, "s256")).toEqual([])
      })

      it("10,001 array elements in a point are refused; 10,000 are accepted", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ xy: "xy-graph", sp: "sparkline" })
        const pairs = (n: number) => Array.from({ length: n }, (_, i) => ({ x: i, y: i % 7 }))
        const series = (n: number) => Array.from({ length: n }, (_, i) => ({ number: i, timestamp: 1_600_000_000 + i }))
        expectError(await api.pushPoint(accessKey, "xy", pairs(10_001)), 413, "payload_too_large")
        expectError(await api.pushPoint(accessKey, "sp", series(10_001)), 413, "payload_too_large")
        expectError(
          await api.push({ accessKey, streams: [{ streamName: "xy", point: pairs(10_001) }] }),
          413,
          "payload_too_large"
        )
        expect(await api.entries(accessKey, "xy")).toEqual([])
        expect(await api.entries(accessKey, "sp")).toEqual([])
        expectSuccess(await api.pushPoint(accessKey, "xy", pairs(10_000)))
        expect(await api.entries(accessKey, "xy")).toHaveLength(10_000)
        expectSuccess(await api.pushPoint(accessKey, "sp", series(10_000)))
        const sp = await api.entries(accessKey, "sp")
        expect(sp).toHaveLength(10_000)
        expect(sp[9_999]).toEqual({ ts: 1_600_000_000 + 9_999, point: { number: 9_999 } })
      }, 120_000)
    })

    describe("admin errors", () => {
      it("401 without a token or with a wrong one, on every admin route", async () => {
        const { api } = ctx
        const account = await api.setup({ s: "number" })
        const routes: Array<[string, string, unknown]> = [
          ["POST", "/admin/accounts", { name: "x" }],
          ["POST", `/admin/accounts/${account.id}/access-keys`, undefined],
          ["GET", `/admin/accounts/${account.id}/widgets`, undefined],
          ["POST", `/admin/accounts/${account.id}/widgets`, { streamName: "t", type: "number" }],
          ["DELETE", `/admin/accounts/${account.id}/widgets/s`, undefined]
        ]
        for (const [method, path, body] of routes) {
          for (const token of [null, "wrong-token", api.adminToken + "x", ""]) {
            expectAnyError(await api.admin(method, path, body, token), 401)
          }
        }
        // A non-bearer scheme and the account's own access key do not work either.
        const basic = await api.fetch("/admin/accounts", {
          method: "POST",
          headers: { authorization: `Basic ${Buffer.from(`x:${api.adminToken}`).toString("base64")}` },
          body: "{}"
        })
        expect(basic.status).toBe(401)
        expect(
          (await api.admin("GET", `/admin/accounts/${account.id}/widgets`, undefined, account.accessKey)).status
        ).toBe(401)
        // Nothing was changed: the widget still exists and holds nothing new.
        const widgets = await api.admin("GET", `/admin/accounts/${account.id}/widgets`)
        expect(widgets.json.widgets.map((w: { streamName: string }) => w.streamName)).toEqual(["s"])
      })

      it("409 conflict when the stream name is taken in the account", async () => {
        const { api } = ctx
        const account = await api.setup({ revenue: "number" })
        expectSuccess(await api.pushPoint(account.accessKey, "revenue", 5))
        await expectUnchanged(api, account.accessKey, ["revenue"], async () => {
          const r = await api.admin("POST", `/admin/accounts/${account.id}/widgets`, {
            streamName: "revenue",
            type: "text-feed"
          })
          expectError(r, 409, "conflict")
        })
        // The widget keeps its type.
        expectSuccess(await api.pushPoint(account.accessKey, "revenue", 6))
      })
    })
  })
}
