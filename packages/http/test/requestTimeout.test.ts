import { connect } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { entriesOf, eventsPath, openOk } from "../../server/test/e2e/sse.js"
import { json, push, read, setupAccount, startServer, type TestServer } from "./support/server.js"
import { assertTimedOut, trickle } from "./support/trickle.js"

/**
 * The request timeout (`serve --request-timeout`, `HttpConfig.requestTimeoutMs`): a request whose headers or body
 * arrive too slowly is answered 408 `request_timeout` and its connection closed, over a real socket on loopback;
 * answers that outlast the timeout (an event stream) and idle keep-alive connections are not cut.
 */

describe("the request timeout", () => {
  const timeoutMs = 1_000
  let server: TestServer
  let port: number
  let accessKey: string
  beforeAll(async () => {
    server = await startServer({ requestTimeoutMs: timeoutMs })
    port = Number(new URL(server.url).port)
    accessKey = (await setupAccount(server, [["n", "number"]])).accessKey
  })
  afterAll(() => server.close())

  it("answers 408 request_timeout and closes a connection whose body trickles in a byte at a time", async () => {
    const body = JSON.stringify({ accessKey, streamName: "n", point: 7 })
    const head =
      "POST /customSend HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
      `Content-Length: ${body.length}\r\n\r\n`
    // Five at once (each would take about 4 s at a byte every 100 ms): all are cut after about a second.
    const answers = await Promise.all(Array.from({ length: 5 }, () => trickle(port, head, body, 100, 5_000)))
    for (const answer of answers) assertTimedOut(answer, timeoutMs)
    // Nothing was stored, and the server goes on serving.
    assert.deepStrictEqual((await json(await read(server, accessKey, "n", "?since=0"))).body.data, [])
    assert.strictEqual((await push(server, { accessKey, streamName: "n", point: 1 })).status, 200)
  })

  it("answers 408 to headers that trickle in", async () => {
    const head = "GET /healthz HTTP/1.1\r\n"
    assertTimedOut(await trickle(port, head, "Host: x\r\nX-Slow: " + "y".repeat(100), 100, 5_000), timeoutMs)
  })

  it("does not cut an event stream that stays open longer, nor an idle keep-alive connection", async () => {
    const stream = await openOk(server.url, eventsPath(accessKey, "n"))
    await new Promise((r) => setTimeout(r, 2.5 * timeoutMs))
    assert.strictEqual((await push(server, { accessKey, streamName: "n", point: 42 })).status, 200)
    await stream.until("the entry", () => entriesOf(stream.events).some((e) => e.point !== null), 5_000)
    stream.close()
    // One request answered, the connection idle past the timeout, then a second request on it.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1")
      let received = ""
      socket.on("data", (d) => {
        received += d.toString("latin1")
        if (received.split("HTTP/1.1 200").length === 3) socket.end()
      })
      socket.on("close", () => resolve(received))
      socket.on("error", reject)
      socket.setTimeout(10_000, () => socket.destroy())
      socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
      setTimeout(() => socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"), 1.5 * timeoutMs)
    })
    assert.strictEqual(answer.split("HTTP/1.1 200").length, 3, answer)
    assert.notInclude(answer, "408")
  })

  it("does not cut a streamed read whose client stops reading for longer", async () => {
    // 4,000 entries of about 1 KB: four pages, more than a socket's buffers hold, so the answer waits on the client.
    const { accessKey: feedKey } = await setupAccount(server, [["wide", "text-feed"]])
    const msg = "m".repeat(1000)
    for (let from = 0; from < 4000; from += 800) {
      const point = Array.from({ length: 800 }, (_, i) => ({ title: String(from + i), msg }))
      assert.strictEqual((await push(server, { accessKey: feedKey, streamName: "wide", point })).status, 200)
    }
    const received = await new Promise<Buffer>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1")
      const chunks: Array<Buffer> = []
      socket.on("data", (d) => chunks.push(d))
      socket.on("end", () => resolve(Buffer.concat(chunks)))
      socket.on("error", reject)
      socket.setTimeout(15_000, () => socket.destroy(new Error("no end of the answer")))
      socket.write(`GET /api/v2/${feedKey}/datastream/wide?since=0 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
      socket.pause()
      setTimeout(() => socket.resume(), 2.5 * timeoutMs)
    })
    const text = received.toString("utf8")
    assert.match(text, /^HTTP\/1\.1 200 /)
    // The chunked body holds every entry: its last title is the 4,000th.
    assert.include(text, '"title":"3999"')
    assert.match(text, /0\r\n\r\n$/)
  })
})
