import { connect } from "node:net"
import { defaultLimits, StorageError, StorageUnavailable } from "@dashstream/core"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { json, push, pushRaw, read, setupAccount, startServer, type TestServer } from "./support/server.js"

describe("POST /customSend", () => {
  let server: TestServer
  let key: string

  beforeAll(async () => {
    server = await startServer({ limits: { ...defaultLimits, maxStreams: 3 } })
    const account = await setupAccount(server, [
      ["n", "number"],
      ["m", "number"],
      ["spark", "sparkline"],
      ["faults", "number"]
    ])
    key = account.accessKey
  })
  afterAll(() => server.close())

  const latestNumber = async (stream: string): Promise<unknown> => {
    const { body } = await json(await read(server, key, stream))
    return body.data[0]?.point.number
  }

  it("parses the raw body as JSON whatever the Content-Type says", async () => {
    const cases: ReadonlyArray<readonly [string, Record<string, string>]> = [
      ["application/json", { "content-type": "application/json" }],
      ["form", { "content-type": "application/x-www-form-urlencoded" }],
      ["text/plain", { "content-type": "text/plain; charset=utf-8" }],
      ["multipart label", { "content-type": "multipart/form-data; boundary=x" }]
    ]
    let n = 0
    for (const [label, headers] of cases) {
      n++
      const res = await json(
        await pushRaw(server, JSON.stringify({ accessKey: key, streamName: "n", point: n }), headers)
      )
      assert.deepStrictEqual([label, res.status, res.body], [label, 200, { message: "Success!" }])
      assert.strictEqual(await latestNumber("n"), n)
    }
    // No Content-Type header at all (a byte body makes fetch send none).
    const bytes = new TextEncoder().encode(JSON.stringify({ accessKey: key, streamName: "n", point: 99 }))
    const res = await fetch(`${server.url}/customSend`, { method: "POST", body: bytes })
    assert.strictEqual(res.status, 200)
    assert.strictEqual(await latestNumber("n"), 99)
  })

  it("serves /customSend/ (trailing slash) and ignores a query string, without redirecting", async () => {
    for (const [path, value] of [
      ["/customSend/", 7],
      ["/customSend?x=1", 8],
      ["/customSend/?x=1", 9]
    ] as const) {
      const res = await pushRaw(server, JSON.stringify({ accessKey: key, streamName: "m", point: value }), {}, path)
      assert.strictEqual(res.status, 200, path)
      assert.strictEqual(await latestNumber("m"), value)
    }
  })

  it("accepts a multi-stream push and a clear command", async () => {
    const res = await push(server, {
      accessKey: key,
      streams: [
        { streamName: "n", point: 1 },
        { streamName: "m", point: 2 }
      ]
    })
    assert.strictEqual(res.status, 200)
    assert.strictEqual(await latestNumber("m"), 2)
    assert.strictEqual((await push(server, { accessKey: key, streamName: "spark", point: 5 })).status, 200)
    assert.strictEqual((await push(server, { accessKey: key, streamName: "spark", command: "clear" })).status, 200)
    assert.deepStrictEqual((await json(await read(server, key, "spark", "?since=0"))).body.data, [])
  })

  it("answers 400 invalid_json for a body that is not JSON (or empty)", async () => {
    for (const body of ["{not json", "", "accessKey=k&streamName=n"]) {
      const res = await json(await pushRaw(server, body, { "content-type": "application/x-www-form-urlencoded" }))
      assert.strictEqual(res.status, 400)
      assert.strictEqual(res.body.error.code, "invalid_json")
      assert.strictEqual(res.headers.get("content-type"), "application/json")
    }
  })

  it("answers 400 invalid_request, invalid_point, unsupported_command with a path", async () => {
    const missingKey = await json(await push(server, { streamName: "n", point: 1 }))
    assert.deepStrictEqual(
      [missingKey.status, missingKey.body.error.code, missingKey.body.error.path],
      [400, "invalid_request", "accessKey"]
    )
    const epoint = await json(await push(server, { accessKey: key, streamName: "n", epoint: "xyz" }))
    assert.strictEqual(epoint.body.error.code, "invalid_request")
    const badPoint = await json(await push(server, { accessKey: key, streamName: "n", point: "abc" }))
    assert.deepStrictEqual([badPoint.status, badPoint.body.error.code], [400, "invalid_point"])
    assert.match(badPoint.body.error.path, /^point/)
    const multi = await json(
      await push(server, {
        accessKey: key,
        streams: [
          { streamName: "n", point: 1 },
          { streamName: "m", point: "x" }
        ]
      })
    )
    assert.strictEqual(multi.body.error.code, "invalid_point")
    assert.match(multi.body.error.path, /^streams\[1\]\.point/)
    const clear = await json(await push(server, { accessKey: key, streamName: "n", command: "clear" }))
    assert.deepStrictEqual([clear.status, clear.body.error.code], [400, "unsupported_command"])
  })

  it("answers 403 forbidden for an unknown key and 404 stream_not_found for an unknown stream", async () => {
    const forbidden = await json(await push(server, { accessKey: "nope", streamName: "n", point: 1 }))
    assert.deepStrictEqual([forbidden.status, forbidden.body.error.code], [403, "forbidden"])
    const missing = await json(await push(server, { accessKey: key, streamName: "ghost", point: 1 }))
    assert.deepStrictEqual(
      [missing.status, missing.body.error.code, missing.body.error.path],
      [404, "stream_not_found", "streamName"]
    )
  })

  it("answers 413 payload_too_large for a body of 1 MiB + 1 byte, declared or streamed", async () => {
    const big = new Uint8Array(1024 * 1024 + 1).fill(0x20)
    const declared = await json(await pushRaw(server, big))
    assert.deepStrictEqual([declared.status, declared.body.error.code], [413, "payload_too_large"])
    // Chunked, no Content-Length: the lane counts bytes as they arrive.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 17; i++) controller.enqueue(new Uint8Array(64 * 1024).fill(0x20))
        controller.close()
      }
    })
    const chunked = await json(
      await fetch(`${server.url}/customSend`, { method: "POST", body: stream, duplex: "half" } as RequestInit)
    )
    assert.deepStrictEqual([chunked.status, chunked.body.error.code], [413, "payload_too_large"])
    // Exactly at the limit is not too large (it is whitespace around a valid push).
    const body = JSON.stringify({ accessKey: key, streamName: "n", point: 5 })
    const atLimit = body + " ".repeat(1024 * 1024 - Buffer.byteLength(body))
    assert.strictEqual((await pushRaw(server, atLimit)).status, 200)
  })

  it("refuses a huge declared Content-Length before reading, closing the connection", async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(server.url).port), "127.0.0.1")
      let received = ""
      socket.on("data", (d) => (received += d.toString("latin1")))
      socket.on("close", () => resolve(received))
      socket.on("error", reject)
      socket.write(`POST /customSend HTTP/1.1\r\nHost: x\r\nContent-Length: ${1024 ** 4}\r\n\r\n{"accessKey":`)
    })
    assert.match(answer, /^HTTP\/1\.1 413 /)
    assert.match(answer, /connection: close/i)
    assert.include(answer, '"code":"payload_too_large"')
    // The same check guards every other path.
    const admin = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(server.url).port), "127.0.0.1")
      let received = ""
      socket.on("data", (d) => (received += d.toString("latin1")))
      socket.on("close", () => resolve(received))
      socket.on("error", reject)
      socket.write(`POST /admin/accounts HTTP/1.1\r\nHost: x\r\nContent-Length: ${1024 ** 4}\r\n\r\n{`)
    })
    assert.match(admin, /^HTTP\/1\.1 413 /)
  })

  it("answers 413 for too many streams, with the path", async () => {
    const streams = Array.from({ length: 4 }, () => ({ streamName: "n", point: 1 }))
    const res = await json(await push(server, { accessKey: key, streams }))
    assert.deepStrictEqual(
      [res.status, res.body.error.code, res.body.error.path],
      [413, "payload_too_large", "streams"]
    )
  })

  it("answers 503 unavailable and 500 internal without exposing the cause", async () => {
    server.faults.write = new StorageUnavailable({ cause: new Error("connect ECONNREFUSED") })
    const unavailable = await json(await push(server, { accessKey: key, streamName: "faults", point: 1 }))
    assert.deepStrictEqual([unavailable.status, unavailable.body.error.code], [503, "unavailable"])
    server.faults.write = new StorageError({ cause: new Error("SQLITE_CORRUPT: SELECT * FROM secrets") })
    const internal = await json(await push(server, { accessKey: key, streamName: "faults", point: 1 }))
    server.faults.write = undefined
    assert.deepStrictEqual([internal.status, internal.body.error.code], [500, "internal"])
    assert.notInclude(JSON.stringify(internal.body), "SELECT")
    assert.notInclude(JSON.stringify(internal.body), "SQLITE")
    server.faults.writeDefect = new Error(`boom with ${key}`)
    const defect = await json(await push(server, { accessKey: key, streamName: "faults", point: 1 }))
    server.faults.writeDefect = undefined
    assert.deepStrictEqual(defect.body, { error: { code: "internal", message: "internal server error" } })
    // The cause is logged, the access key is not.
    const logged = server.logs.filter((line) => line.includes("boom with"))
    assert.isAbove(logged.length, 0)
    for (const line of server.logs) assert.notInclude(line, key)
  })

  it("logs pushes answered 503 in one line with the underlying cause, once per change of cause, without the key", async () => {
    const before = server.logs.length
    const unavailable = (message: string) => new StorageUnavailable({ cause: new Error(message) })
    const lines = () => server.logs.slice(before).filter((line) => line.includes("503"))
    try {
      // The driver's error under the StorageUnavailable, not the wrapper's "An error has occurred" and its stack.
      server.faults.write = unavailable(`connect ECONNREFUSED 127.0.0.1:5432 for ${key}`)
      for (let i = 0; i < 5; i++) {
        assert.strictEqual((await push(server, { accessKey: key, streamName: "faults", point: i })).status, 503)
      }
      await new Promise((resolve) => setTimeout(resolve, 1100))
      // The same cause a second later: still one line, not one per request or per second.
      assert.strictEqual((await push(server, { accessKey: key, streamName: "faults", point: 5 })).status, 503)
      server.faults.write = unavailable("timeout exceeded when trying to connect")
      assert.strictEqual((await push(server, { accessKey: key, streamName: "faults", point: 6 })).status, 503)
      assert.strictEqual((await push(server, { accessKey: key, streamName: "faults", point: 7 })).status, 503)
      await new Promise((resolve) => setTimeout(resolve, 50))
      assert.deepStrictEqual(lines(), [
        "WARN POST /customSend answered 503 unavailable: connect ECONNREFUSED 127.0.0.1:5432 for <redacted>",
        "WARN POST /customSend answered 503 unavailable: timeout exceeded when trying to connect (5 more 503 answers since the previous line)"
      ])
      for (const line of server.logs) assert.notInclude(line, key)
    } finally {
      server.faults.write = undefined
    }
  })

  it("survives a body longer than its Content-Length (the original Node client with non-ASCII text)", async () => {
    const body = JSON.stringify({ accessKey: key, streamName: "spark", point: { number: 1, suffix: "€€€" } })
    const shortLength = body.length // characters, not bytes: 6 bytes short
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(server.url).port), "127.0.0.1")
      let received = ""
      socket.on("data", (d) => (received += d.toString("latin1")))
      socket.on("close", () => resolve(received))
      socket.on("error", reject)
      socket.setTimeout(5000, () => {
        socket.destroy()
        reject(new Error(`timed out; received ${JSON.stringify(received)}`))
      })
      socket.write(
        `POST /customSend HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${shortLength}\r\n\r\n`
      )
      socket.end(body)
    })
    assert.match(answer, /^HTTP\/1\.1 400 /)
    // The bytes past Content-Length break framing: the connection is answered 400 with a JSON error body and closed
    // (the original Node client waits for a body: a bare 400 would hang it). The reply to the truncated body itself
    // (400 invalid_json) may or may not be written before the connection closes.
    for (const reply of answer.split(/(?=HTTP\/1\.1 )/)) assert.match(reply, /\r\n\r\n\{"error":/)
    assert.deepStrictEqual((await json(await read(server, key, "spark", "?since=0"))).body.data, [])
    // The server is still serving.
    assert.strictEqual((await push(server, { accessKey: key, streamName: "n", point: 3 })).status, 200)
  })
})

describe("rate limiting", () => {
  it("answers 429 rate_limited with Retry-After once a key has used its burst, per key", async () => {
    const server = await startServer({ rateLimit: 2 })
    try {
      const a = await setupAccount(server, [["n", "number"]])
      const b = await setupAccount(server, [["n", "number"]])
      const statuses: Array<number> = []
      for (let i = 0; i < 3; i++)
        statuses.push((await push(server, { accessKey: a.accessKey, streamName: "n", point: i })).status)
      assert.deepStrictEqual(statuses, [200, 200, 429])
      const limited = await json(await push(server, { accessKey: a.accessKey, streamName: "n", point: 9 }))
      assert.strictEqual(limited.body.error.code, "rate_limited")
      assert.isAtLeast(Number(limited.headers.get("retry-after")), 1)
      // Reads count against the same key (taken from the path).
      const readLimited = await json(await read(server, a.accessKey, "n"))
      assert.deepStrictEqual([readLimited.status, readLimited.body.error.code], [429, "rate_limited"])
      assert.isNotNull(readLimited.headers.get("retry-after"))
      // Another key has its own budget.
      assert.strictEqual((await push(server, { accessKey: b.accessKey, streamName: "n", point: 1 })).status, 200)
      assert.strictEqual((await read(server, b.accessKey, "n")).status, 200)
    } finally {
      await server.close()
    }
  })
})
