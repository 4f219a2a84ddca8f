/**
 * HTTP framing errors of the original clients (docs/client-compat.md): a body longer than its Content-Length, as the
 * Node client sends for non-ASCII text, is answered 4xx and closed without disturbing other requests.
 */
import { describe, expect, it } from "vitest"
import { backends, expectSuccess, rawExchange, suiteName, useServer } from "./harness.js"

for (const backend of backends) {
  describe(suiteName("client compatibility", backend), () => {
    const ctx = useServer(backend)

    describe("HTTP framing errors", () => {
      /** The Node client's request for non-ASCII text: Content-Length counts UTF-16 units, so it is too short. */
      const nodeNonAscii = (accessKey: string, stream: string) => {
        const json = JSON.stringify({ streamName: stream, accessKey, point: { title: "T", msg: "café ✓" } })
        const body = Buffer.from(json)
        expect(body.length).toBeGreaterThan(json.length)
        const head =
          `POST /customSend HTTP/1.1\r\nHost: www.leftronic.com\r\n` +
          `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${json.length}\r\nConnection: keep-alive\r\n\r\n`
        return Buffer.concat([Buffer.from(head), body])
      }

      it("a body longer than its Content-Length: answered 4xx and closed, nothing stored", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "text-feed" })
        const { received, closedByServer } = await rawExchange(api.baseUrl, nodeNonAscii(accessKey, "s"))
        expect(received).toMatch(/^HTTP\/1\.[01] 4\d\d/)
        expect(received).not.toMatch(/HTTP\/1\.[01] 200/)
        expect(closedByServer, "server closed the connection").toBe(true)
        expect(await api.entries(accessKey, "s")).toEqual([])
      })

      it("excess bytes that look like garbage: nothing stored, the connection is closed", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ s: "label" })
        const json = JSON.stringify({ accessKey, streamName: "s", point: { label: "x" } })
        const declared = json.length - 5
        const bytes = Buffer.from(
          `POST /customSend/ HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n${json}` +
            "\u0000\u0001 garbage".repeat(500)
        )
        const { received, closedByServer } = await rawExchange(api.baseUrl, bytes)
        expect(received).toMatch(/^HTTP\/1\.[01] 4\d\d/)
        expect(closedByServer).toBe(true)
        expect(await api.entries(accessKey, "s")).toEqual([])
      })

      it("does not disturb other requests, during or after", async () => {
        const { api } = ctx
        const { accessKey } = await api.setup({ bad: "text-feed", good: "number" })
        const bad = Array.from({ length: 10 }, () => rawExchange(api.baseUrl, nodeNonAscii(accessKey, "bad")))
        const good = Array.from({ length: 20 }, (_, i) => api.pushPoint(accessKey, "good", { number: i }))
        const [badResults, goodResults] = await Promise.all([Promise.all(bad), Promise.all(good)])
        for (const r of goodResults) expectSuccess(r)
        for (const r of badResults) expect(r.received).toMatch(/^HTTP\/1\.[01] 4\d\d/)
        expect(await api.entries(accessKey, "bad")).toEqual([])
        expect(await api.entries(accessKey, "good")).toHaveLength(20)
        expectSuccess(await api.pushPoint(accessKey, "good", 99))
        expect(await api.latest(accessKey, "good")).toEqual({ number: 99 })
      })
    })
  })
}
