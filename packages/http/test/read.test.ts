import { StorageError, StorageUnavailable } from "@dashstream/core"
import { connect, type Socket } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { json, push, read, setupAccount, startServer, type TestServer } from "./support/server.js"

describe("GET /api/v2/:accessKey/datastream/:streamName", () => {
  let server: TestServer
  let key: string

  beforeAll(async () => {
    server = await startServer()
    key = (
      await setupAccount(server, [
        ["n", "number"],
        ["my stream", "number"],
        ["feed", "text-feed"],
        ["empty", "number"]
      ])
    ).accessKey
    for (const [number, timestamp] of [
      [1, 1_700_000_000],
      [2, 1_700_000_000.5],
      [3, 1_700_000_001.123456]
    ] as const) {
      assert.strictEqual(
        (await push(server, { accessKey: key, streamName: "n", point: { number, timestamp } })).status,
        200
      )
    }
  })
  afterAll(() => server.close())

  it("answers the contract's JSON with Cache-Control: no-store", async () => {
    const res = await read(server, key, "n", "?since=0")
    assert.strictEqual(res.status, 200)
    assert.strictEqual(res.headers.get("cache-control"), "no-store")
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/)
    const text = await res.text()
    assert.strictEqual(
      text,
      '{"message":"Success!","data":[' +
        '{"ts":1700000000,"point":{"number":1}},' +
        '{"ts":1700000000.5,"point":{"number":2}},' +
        '{"ts":1700000001.123456,"point":{"number":3}}]}'
    )
  })

  it("returns the latest entry without since, entries after since, at most limit", async () => {
    assert.deepStrictEqual((await json(await read(server, key, "n"))).body.data, [
      { ts: 1700000001.123456, point: { number: 3 } }
    ])
    assert.deepStrictEqual(
      (await json(await read(server, key, "n", "?since=1700000000.5"))).body.data.map((e: any) => e.point.number),
      [3]
    )
    assert.deepStrictEqual(
      (await json(await read(server, key, "n", "?since=0&limit=2"))).body.data.map((e: any) => e.point.number),
      [1, 2]
    )
    assert.deepStrictEqual((await json(await read(server, key, "empty"))).body, { message: "Success!", data: [] })
  })

  it("returns stored points of other widget types as stored", async () => {
    const point = { title: "T", msg: 'héllo "quoted" \u2028', imgUrl: "https://example.com/a.png" }
    assert.strictEqual((await push(server, { accessKey: key, streamName: "feed", point })).status, 200)
    const { body } = await json(await read(server, key, "feed"))
    assert.deepStrictEqual(body.data[0].point, point)
  })

  it("URL-decodes path segments (%20 is a space)", async () => {
    assert.strictEqual((await push(server, { accessKey: key, streamName: "my stream", point: 42 })).status, 200)
    const res = await fetch(`${server.url}/api/v2/${key}/datastream/my%20stream`)
    assert.strictEqual(res.status, 200)
    assert.strictEqual(((await res.json()) as any).data[0].point.number, 42)
  })

  it("reads stream names of 255 characters, also when URL-encoding makes them much longer", async () => {
    const { accessKey } = await setupAccount(server, [
      ["x".repeat(255), "number"],
      ["é".repeat(255), "number"]
    ])
    for (const name of ["x".repeat(255), "é".repeat(255)]) {
      assert.strictEqual((await push(server, { accessKey, streamName: name, point: 1 })).status, 200)
      const res = await json(await read(server, accessKey, name))
      assert.deepStrictEqual([res.status, res.body.data.length], [200, 1])
    }
  })

  it("matches paths exactly (case-sensitive), ignoring one trailing slash", async () => {
    assert.strictEqual((await fetch(`${server.url}/API/v2/${key}/datastream/n`)).status, 404)
    assert.strictEqual((await fetch(`${server.url}/api/v2/${key}/DataStream/n`)).status, 404)
    assert.strictEqual((await fetch(`${server.url}/api/v2/${key}/datastream/n/`)).status, 200)
  })

  it("answers 400 invalid_since, 400 invalid_request for a bad limit", async () => {
    for (const since of ["abc", "-1", "", "NaN", "Infinity"]) {
      const res = await json(await read(server, key, "n", `?since=${since}`))
      assert.deepStrictEqual([since, res.status, res.body.error.code], [since, 400, "invalid_since"])
    }
    for (const limit of ["0", "x", "100001", "1.5"]) {
      const res = await json(await read(server, key, "n", `?since=0&limit=${limit}`))
      assert.deepStrictEqual([limit, res.status, res.body.error.code], [limit, 400, "invalid_request"])
    }
    // A repeated parameter fails the HttpApi's own query decoding: still the contract's body.
    const twice = await json(await read(server, key, "n", "?since=1&since=2"))
    assert.deepStrictEqual(
      [twice.status, twice.body.error.code, twice.body.error.path],
      [400, "invalid_request", "since"]
    )
  })

  it("answers 403 forbidden for an unknown key and 404 stream_not_found", async () => {
    const forbidden = await json(await read(server, "not-a-key", "n"))
    assert.deepStrictEqual([forbidden.status, forbidden.body.error.code], [403, "forbidden"])
    const missing = await json(await read(server, key, "ghost"))
    assert.deepStrictEqual([missing.status, missing.body.error.code], [404, "stream_not_found"])
    // A stream of another account is not found either.
    const other = await setupAccount(server, [["theirs", "number"]])
    const theirs = await json(await read(server, key, "theirs"))
    assert.deepStrictEqual([theirs.status, theirs.body.error.code], [404, "stream_not_found"])
    assert.strictEqual((await read(server, other.accessKey, "theirs")).status, 200)
  })

  it("answers 503 unavailable and 500 internal on storage failures, never with the cause", async () => {
    server.faults.read = new StorageUnavailable({ cause: new Error("pool exhausted") })
    const unavailable = await json(await read(server, key, "n"))
    server.faults.read = new StorageError({ cause: new Error("SQLITE_ERROR near SELECT") })
    const internal = await json(await read(server, key, "n"))
    server.faults.read = undefined
    assert.deepStrictEqual([unavailable.status, unavailable.body.error.code], [503, "unavailable"])
    assert.deepStrictEqual(internal.body, { error: { code: "internal", message: "internal server error" } })
    assert.strictEqual(internal.status, 500)
    assert.isTrue(server.logs.some((line) => line.includes("SQLITE_ERROR")))
    for (const line of server.logs) assert.notInclude(line, key)
  })

  describe("a read larger than one page", () => {
    // 2,500 entries: three pages of the default 1,000.
    const count = 2500
    let key: string
    const pushMany = async (streamName: string) => {
      const point = Array.from({ length: count }, (_, i) => ({ number: i, timestamp: 1_600_000_000 + i }))
      const res = await push(server, { accessKey: key, streamName, point })
      assert.strictEqual(res.status, 200, await res.text())
    }

    beforeAll(async () => {
      key = (
        await setupAccount(server, [
          ["big", "sparkline"],
          ["broken", "sparkline"]
        ])
      ).accessKey
      await pushMany("big")
      await pushMany("broken")
      // 20,000 entries: twenty pages, in two pushes (10,000 elements at most per array).
      const huge = (await setupAccount(server, [["huge", "sparkline"]])).accessKey
      hugeKey = huge
      // 20,000 entries of about 1 KB: twenty pages of about 1 MB, more than a socket's buffers hold.
      feedKey = (await setupAccount(server, [["wide", "text-feed"]])).accessKey
      const msg = "m".repeat(1000)
      for (let from = 0; from < 20_000; from += 800) {
        const point = Array.from({ length: 800 }, (_, i) => ({ title: String(from + i), msg }))
        const res = await push(server, { accessKey: feedKey, streamName: "wide", point })
        assert.strictEqual(res.status, 200, await res.text())
      }
      for (const from of [0, 10_000]) {
        const point = Array.from({ length: 10_000 }, (_, i) => ({
          number: from + i,
          timestamp: 1_600_000_000 + from + i
        }))
        const res = await push(server, { accessKey: huge, streamName: "huge", point })
        assert.strictEqual(res.status, 200, await res.text())
      }
    })
    let hugeKey: string
    let feedKey: string

    it("gives the event loop up between pages, so one read does not hold the server", async () => {
      // Counts turns of the event loop: one increment per check phase.
      let turns = 0
      let ticking = true
      const tick = () => {
        turns++
        if (ticking) setImmediate(tick)
      }
      setImmediate(tick)
      const asked: Array<number> = []
      server.faults.onReadPage = () => void asked.push(turns)
      try {
        const body = JSON.parse(await (await read(server, hugeKey, "huge", "?since=0")).text())
        assert.strictEqual(body.data.length, 20_000)
      } finally {
        ticking = false
        server.faults.onReadPage = undefined
      }
      assert.isAtLeast(asked.length, 20)
      for (let i = 1; i < asked.length; i++) {
        assert.isAbove(asked[i]!, asked[i - 1]!, `page ${i + 1} was fetched in the same event-loop turn as page ${i}`)
      }
    })

    it("8 readers that do not read hold at most a few pages each; /healthz and pushes are answered meanwhile", async () => {
      let asked = 0
      server.faults.onReadPage = () => void asked++
      const url = new URL(server.url)
      const sockets: Array<Socket> = []
      try {
        for (let i = 0; i < 8; i++) {
          const socket = connect(Number(url.port), url.hostname)
          socket.pause()
          socket.write(`GET /api/v2/${feedKey}/datastream/wide?since=0 HTTP/1.1\r\nHost: x\r\n\r\n`)
          sockets.push(socket)
        }
        // Let the server fill the sockets' buffers; without back-pressure it would read all 8 x 20 pages.
        await new Promise((resolve) => setTimeout(resolve, 500))
        const started = performance.now()
        const health = await fetch(`${server.url}/healthz`)
        assert.strictEqual(health.status, 200)
        const pushed = await push(server, { accessKey: hugeKey, streamName: "huge", point: { number: -1 } })
        assert.strictEqual(pushed.status, 200)
        assert.isBelow(performance.now() - started, 2000)
        // About 4 pages each fill a socket's buffers here; all 20 would mean no back-pressure.
        assert.isAtMost(asked, 8 * 10, `the server read ${asked} pages for clients that read nothing`)
      } finally {
        server.faults.onReadPage = undefined
        for (const socket of sockets) socket.destroy()
      }
    })

    it("is streamed (chunked, no Content-Length) and holds every entry once, in order", async () => {
      const res = await read(server, key, "big", "?since=0")
      assert.strictEqual(res.status, 200)
      assert.isNull(res.headers.get("content-length"))
      assert.strictEqual(res.headers.get("transfer-encoding"), "chunked")
      assert.strictEqual(res.headers.get("cache-control"), "no-store")
      const body = JSON.parse(await res.text())
      assert.strictEqual(body.message, "Success!")
      assert.deepStrictEqual(
        body.data.map((e: any) => e.point.number),
        Array.from({ length: count }, (_, i) => i)
      )
      assert.strictEqual(body.data[count - 1].ts, 1_600_000_000 + count - 1)
    })

    it("keeps limit and since across pages", async () => {
      const limited = await json(await read(server, key, "big", "?since=0&limit=2001"))
      assert.deepStrictEqual(
        limited.body.data.map((e: any) => e.point.number),
        Array.from({ length: 2001 }, (_, i) => i)
      )
      const after = await json(await read(server, key, "big", `?since=${1_600_000_000 + 999}&limit=1500`))
      assert.deepStrictEqual(
        after.body.data.map((e: any) => e.point.number),
        Array.from({ length: 1500 }, (_, i) => 1000 + i)
      )
    })

    it("a storage failure after the first page closes the connection: no well-formed short body", async () => {
      server.faults.read = new StorageError({ cause: new Error("SQLITE_IOERR on page two") })
      server.faults.readFaultAfter = 1
      const outcome = await read(server, key, "broken", "?since=0").then(
        async (res) => {
          // Headers went out with the first page; the body must break off rather than end cleanly.
          assert.strictEqual(res.status, 200)
          return res.text().then(
            (text) => `ended cleanly with ${text.length} characters`,
            (error: unknown) => `broken: ${String(error)}`
          )
        },
        (error: unknown) => `broken: ${String(error)}`
      )
      server.faults.read = undefined
      server.faults.readFaultAfter = 0
      assert.match(outcome, /^broken/)
      assert.isTrue(
        server.logs.some((line) => line.includes("aborted after 1000 entries") && line.includes("SQLITE_IOERR"))
      )
      for (const line of server.logs) assert.notInclude(line, key)
      // The server is fine afterwards, and the stream's data is intact.
      assert.strictEqual((await json(await read(server, key, "broken", "?since=0"))).body.data.length, count)
    })
  })
})
