/**
 * Replays of what the original client libraries put on the wire (docs/client-compat.md): exact paths, headers,
 * Content-Type labels and JSON as each encoder writes it. The contract says a script written for the original
 * service must work by changing the host only. Also `Expect: 100-continue` (libcurl). The replayed calls are in
 * compatReplays.ts, the clients' framing in compatClients.ts; HTTP framing errors in compat.framing.test.ts.
 */
import { describe, expect, it } from "vitest"
import { clients, phpJson, pythonJson, replay, send } from "./compatClients.js"
import { replays } from "./compatReplays.js"
import { backends, expectSuccess, rawExchange, suiteName, useServer } from "./harness.js"

for (const backend of backends) {
  describe(suiteName("client compatibility", backend), () => {
    const ctx = useServer(backend)

    describe("exact request replays", () => {
      for (const r of replays) {
        it(`${r.client}: ${r.call}`, async () => {
          const { api } = ctx
          const { accessKey } = await api.setup({ s: r.type })
          if (r.before !== undefined) expectSuccess(await api.pushPoint(accessKey, "s", r.before))
          const c = clients[r.client]
          await replay(
            api,
            r.client,
            c.encode(c.body(accessKey, "s", r.clear ? { command: "clear" } : { point: r.point }))
          )
          const entries = await api.entries(accessKey, "s")
          expect(entries.map((e) => e.point)).toEqual(r.stored)
          if (r.ts !== undefined) expect(entries.map((e) => e.ts)).toEqual(r.ts)
        })
      }

      it("Python pushList(s, [1, 2]): list items that are numbers are accepted", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "list" })
        await replay(
          api,
          "Python 1.5.0 (urllib2)",
          pythonJson({ streamName: "s", point: { list: [{ listItem: 1 }, { listItem: 2 }] }, accessKey })
        )
        const latest = (await api.latest(accessKey, "s")) as { list: Array<{ listItem: unknown }> }
        expect(latest.list.map((i) => String(i.listItem))).toEqual(["1", "2"])
      })

      it("Python pushMultiple([populateNumber, populateGeo])", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ a: "number", b: "usa-map" })
        await replay(
          api,
          "Python 1.5.0 (urllib2)",
          pythonJson({
            accessKey,
            streams: [
              { streamName: "a", point: { number: 1 } },
              { streamName: "b", point: { latitude: 1.5, longitude: 2 } }
            ]
          })
        )
        expect(await api.points(accessKey, "a")).toEqual([{ number: 1 }])
        expect(await api.points(accessKey, "b")).toEqual([{ latitude: 1.5, longitude: 2 }])
      })

      it("Python setEncryptionKey + push (epoint): 400 invalid_request naming epoint", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        const body = pythonJson({ streamName: "s", epoint: "q83vEjRWeJA=:AAECAwQFBgcICQoLDA0ODw==", accessKey })
        const r = await send(api, "Python 1.5.0 (urllib2)", body)
        expect(r.status).toBe(400)
        const json = JSON.parse(r.text)
        expect(json.error.code).toBe("invalid_request")
        expect(json.error.message).toMatch(/epoint/i)
        expect(await api.entries(accessKey, "s")).toEqual([])
      })

      it("Python float('nan') goes out as the bare NaN token: 400, nothing stored", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        const body = `{"streamName": "s", "point": {"number": NaN}, "accessKey": ${JSON.stringify(accessKey)}}`
        const r = await send(api, "Python 1.5.0 (urllib2)", body)
        expect(r.status).toBe(400)
        expect(JSON.parse(r.text).error.code).toBe("invalid_json")
        expect(await api.entries(accessKey, "s")).toEqual([])
      })

      it("PHP with Expect: 100-continue (large body) gets 100 Continue, then 200", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "html" })
        const html = "<p>" + "x".repeat(4000) + "</p>"
        const body = phpJson({ accessKey, streamName: "s", point: { html } })
        const r = await send(api, "PHP leftronic.php (libcurl)", body, {
          headers: { Expect: "100-continue" },
          expectContinue: true
        })
        expect(r.status, r.text).toBe(200)
        expect(r.continued, "server answered 100 Continue").toBe(true)
        expect(await api.points(accessKey, "s")).toEqual([{ html }])
      })

      it("Node keep-alive: two pushes pipelined on one connection are both stored", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "number" })
        const request = (n: number) => {
          const body = JSON.stringify({ streamName: "s", accessKey, point: { number: n } })
          return (
            `POST /customSend HTTP/1.1\r\nHost: www.leftronic.com\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
            `Content-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n${body}`
          )
        }
        const closing = request(2).replace("Connection: keep-alive", "Connection: close")
        const { received } = await rawExchange(api.baseUrl, Buffer.from(request(1) + closing))
        expect(received.match(/HTTP\/1\.1 200/g)).toHaveLength(2)
        expect(await api.points(accessKey, "s")).toEqual([{ number: 1 }, { number: 2 }])
      })
    })
  })
}
