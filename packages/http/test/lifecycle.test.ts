import { connect } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { json, push, read, setupAccount, startServer } from "./support/server.js"

describe("lifecycle and logging", () => {
  it("lets an in-flight request finish when the scope closes, then stops accepting", async () => {
    const server = await startServer()
    const { accessKey } = await setupAccount(server, [["n", "number"]])
    let release!: () => void
    server.faults.writeGate = new Promise<void>((resolve) => (release = resolve))
    const started = new Promise<void>((resolve) => (server.faults.onWrite = resolve))
    const inFlight = push(server, { accessKey, streamName: "n", point: 1 })
    await started
    const closing = server.close()
    let closed = false
    void closing.then(() => (closed = true))
    await new Promise((resolve) => setTimeout(resolve, 100))
    assert.isFalse(closed, "the scope waits for the request in flight")
    // New connections are refused while it drains.
    const refused = await fetch(`${server.url}/healthz`).then(
      () => false,
      () => true
    )
    assert.isTrue(refused)
    release()
    const res = await json(await inFlight)
    assert.deepStrictEqual([res.status, res.body], [200, { message: "Success!" }])
    await closing
    assert.isTrue(closed)
  })

  it("closes idle keep-alive connections promptly on shutdown", async () => {
    const server = await startServer()
    assert.strictEqual((await fetch(`${server.url}/healthz`)).status, 200)
    const start = performance.now()
    await server.close()
    assert.isBelow(performance.now() - start, 2000)
  })

  it("logs one line per request with the access key redacted, and never the key", async () => {
    const server = await startServer({ logRequests: true })
    try {
      const { accessKey } = await setupAccount(server, [["n", "number"]])
      assert.strictEqual((await push(server, { accessKey, streamName: "n", point: 1 })).status, 200)
      assert.strictEqual((await read(server, accessKey, "n", "?since=0")).status, 200)
      assert.strictEqual((await read(server, accessKey, "ghost")).status, 404)
      assert.strictEqual((await push(server, { accessKey, streamName: "n", point: "x" })).status, 400)
      assert.strictEqual((await fetch(`${server.url}/api/v2/${accessKey}/oops`)).status, 404)
      assert.strictEqual((await fetch(`${server.url}/api/v3/${accessKey}/datastream/n`)).status, 404)
      assert.strictEqual(
        (await fetch(`${server.url}/api/v2/${accessKey}/datastream/n`, { method: "DELETE" })).status,
        405
      )
      server.faults.writeDefect = new Error(`driver said: bad key ${accessKey}`)
      assert.strictEqual((await push(server, { accessKey, streamName: "n", point: 2 })).status, 500)
      server.faults.writeDefect = undefined
      await new Promise((resolve) => setTimeout(resolve, 50))

      const lines = server.logs
      const has = (re: RegExp) =>
        assert.isTrue(
          lines.some((l) => re.test(l)),
          `${re} in\n${lines.join("\n")}`
        )
      has(/^INFO POST \/customSend 200 \d+\.\dms from 127\.0\.0\.1$/)
      has(/^INFO GET \/api\/v2\/<redacted>\/datastream\/n 200 \d+\.\dms from 127\.0\.0\.1$/)
      has(/^INFO GET \/api\/v2\/<redacted>\/datastream\/ghost 404 /)
      has(/^INFO POST \/customSend 400 /)
      has(/^INFO DELETE \/api\/v2\/<redacted>\/datastream\/n 405 /)
      has(/^INFO POST \/customSend 500 /)
      has(/^ERROR internal error answering POST \/customSend/)
      has(/driver said: bad key <redacted>/)
      for (const line of lines) assert.notInclude(line, accessKey)
      assert.isFalse(
        lines.some((l) => l.includes("since=")),
        "query strings are not logged"
      )
    } finally {
      await server.close()
    }
  })

  it("redacts access keys and view tokens whatever the request target's shape, in logs and 404 bodies", async () => {
    const server = await startServer({ logRequests: true })
    try {
      const { accessKey } = await setupAccount(server, [["n", "number"]])
      const token = "VIEWTOKEN0123456789abcdef"
      const viewToken = "dv_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"
      const { port } = new URL(server.url)
      const targets = [
        `http://127.0.0.1:${port}/api/v2/${accessKey}/datastream/n?since=0`,
        `HTTP://localhost/api/v2/${accessKey}/datastream/n`,
        `//api/v2/${accessKey}/datastream/n`,
        `/API/v2/${accessKey}/datastream/n`,
        `/api/V2/${accessKey}/datastream/n`,
        `/api//v2/${accessKey}/datastream/n`,
        `/%61pi/v2/${accessKey}/datastream/n`,
        `/x/api/v2/${accessKey}`,
        `/api/v2/${accessKey}`,
        `/d/${token}`,
        `/d/${token}/events`,
        `//d/${token}/x`,
        `/D/${token}`,
        `http://127.0.0.1:${port}/d/${token}`,
        // Token-shaped segments on paths that are not routes.
        `/assets/${viewToken}`,
        `/${viewToken}`,
        `/dashboard/${viewToken}`,
        `/dashboard/${viewToken}/events`,
        `/x/${accessKey}`
      ]
      const bodies: Array<string> = []
      for (const target of targets) {
        for (const method of ["GET", "POST"]) {
          const answer = await rawRequest(
            Number(port),
            `${method} ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`
          )
          assert.match(answer, /^HTTP\/1\.1 \d{3} /, target)
          bodies.push(answer)
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
      for (const text of [...bodies, ...server.logs]) {
        assert.notInclude(text, accessKey)
        assert.notInclude(text, token)
        assert.notInclude(text, viewToken)
      }
      assert.isAtLeast(server.logs.length, targets.length * 2)
    } finally {
      await server.close()
    }
  })

  it("logs nothing per request by default", async () => {
    const server = await startServer()
    try {
      await fetch(`${server.url}/healthz`)
      await fetch(`${server.url}/customSend`, { method: "POST", body: "{}" })
      assert.deepStrictEqual(server.logs, [])
    } finally {
      await server.close()
    }
  })
})

/** Sends `text` on a fresh connection and resolves with everything the server answers until it closes. */
const rawRequest = (port: number, text: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1")
    let answer = ""
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => (answer += chunk))
    socket.on("error", reject)
    socket.on("close", () => resolve(answer))
    socket.write(text)
  })
