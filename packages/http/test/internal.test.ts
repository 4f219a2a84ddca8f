import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect } from "effect"
import { causeLine, causeText } from "../src/internal/causeText.js"
import { makeRateLimiter } from "../src/internal/rateLimiter.js"
import { accessKeyOfPath, holdSecret, redactPath, requestLine, scrub } from "../src/internal/redact.js"
import { readBodyText } from "../src/internal/readHandlers.js"
import { makeRouteTable } from "../src/internal/routeTable.js"
import { micros, renderEntries, StorageUnavailable } from "@dashstream/core"

describe("redaction", () => {
  it("redacts the access key segment of export paths and drops the query", () => {
    assert.strictEqual(redactPath("/api/v2/SECRET/datastream/s?since=0"), "/api/v2/<redacted>/datastream/s")
    assert.strictEqual(redactPath("/api/v2/SECRET"), "/api/v2/<redacted>")
    assert.strictEqual(redactPath("/api/v3/SECRET/datastream/s"), "/api/<redacted>")
    assert.strictEqual(redactPath("/api/SECRET"), "/api/<redacted>")
    assert.strictEqual(redactPath("/customSend?x=1"), "/customSend")
    // Whatever the shape.
    assert.strictEqual(redactPath("http://h:1/api/v2/SECRET/datastream/s?since=0"), "/api/v2/<redacted>/datastream/s")
    assert.strictEqual(redactPath("//api/v2/SECRET/datastream/s"), "//api/v2/<redacted>/datastream/s")
    assert.strictEqual(redactPath("/API/V2/SECRET/x"), "/API/V2/<redacted>/x")
    assert.strictEqual(redactPath("/%61pi/v2//SECRET"), "/%61pi/v2//<redacted>")
    assert.strictEqual(redactPath("/x/api/v3/SECRET/y"), "/x/api/<redacted>")
    assert.strictEqual(redactPath("/d/TOKEN/events"), "/d/<redacted>/events")
    assert.strictEqual(redactPath("/r/TOKEN/events"), "/r/<redacted>/events")
    assert.strictEqual(redactPath("/r/TOKEN?theme=light"), "/r/<redacted>")
    assert.strictEqual(redactPath("/other/ds_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"), "/other/<redacted>")
    assert.strictEqual(redactPath("http://h"), "/")
    // Anything shaped like a view token or an access key, in any segment and inside one.
    const view = "dv_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"
    const key = "ds_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"
    assert.strictEqual(redactPath(`/assets/${view}`), "/assets/<redacted>")
    assert.strictEqual(redactPath(`/${view}`), "/<redacted>")
    assert.strictEqual(redactPath(`/dashboard/${view}`), "/dashboard/<redacted>")
    assert.strictEqual(redactPath(`/dashboard/${view}/events`), "/dashboard/<redacted>/events")
    assert.strictEqual(redactPath(`/x/${view}.js`), "/x/<redacted>")
    assert.strictEqual(redactPath(`/x/token=${key}`), "/x/<redacted>")
    assert.strictEqual(redactPath(`/x/${encodeURIComponent(`a ${view}`)}`), "/x/<redacted>")
    assert.strictEqual(redactPath(`/x/${view.replace("_", "%5F")}`), "/x/<redacted>")
    // Words that merely start like one are kept.
    assert.strictEqual(redactPath("/assets/dv_short.js"), "/assets/dv_short.js")
    assert.strictEqual(
      redactPath("/api/v2/K/datastream/leads_per_region_this_week"),
      "/api/v2/<redacted>/datastream/leads_per_region_this_week"
    )
    assert.strictEqual(redactPath("/docs"), "/docs")
    assert.strictEqual(
      requestLine("GET", "/api/v2/K/datastream/s", 200, 1.234, "192.0.2.7"),
      "GET /api/v2/<redacted>/datastream/s 200 1.2ms from 192.0.2.7"
    )
  })

  it("redacts console session tokens by their shape, and a held secret only while its scope is open", () => {
    const id = "Gw2kjiFValQG7_DByQBNfg"
    const token = `${id}.1796576323.2SlXyTpb3Ygq6nOqNDj0XcH5Sb1s9kD4vX7xPj7m2Qw`
    assert.strictEqual(redactPath(`/console/${token}`), "/console/<redacted>")
    assert.strictEqual(redactPath(`/console/${id}.1796576323`), "/console/<redacted>")
    assert.strictEqual(redactPath(`/x/cookie=${encodeURIComponent(token)}/y`), "/x/<redacted>/y")
    // A longer word or a short number after the dot is no session.
    assert.strictEqual(redactPath(`/x/a${id}.1796576323`), `/x/a${id}.1796576323`)
    assert.strictEqual(redactPath(`/x/${id}.17`), `/x/${id}.17`)
    const path = "/admin/my-admin%2Ftoken/x/prefix-my-admin-token"
    Effect.runSync(
      Effect.scoped(
        Effect.gen(function* () {
          yield* holdSecret("my-admin-token")
          yield* holdSecret("my-admin/token")
          assert.strictEqual(redactPath(path), "/admin/<redacted>/x/<redacted>")
          assert.strictEqual(redactPath("/a/my-admin/token/b"), "/a/<redacted>/b")
          assert.strictEqual(scrub("said my-admin-token", undefined), "said <redacted>")
        })
      )
    )
    assert.strictEqual(redactPath(path), path)
  })

  it("finds the key in a path and scrubs it (and its encoded form) from text", () => {
    assert.strictEqual(accessKeyOfPath("/api/v2/a%2Bb/datastream/s"), "a+b")
    assert.strictEqual(accessKeyOfPath("/healthz"), undefined)
    assert.strictEqual(accessKeyOfPath("http://h/API/v2/K2/datastream/s"), "K2")
    assert.strictEqual(scrub("key a+b or a%2Bb", "a+b"), "key <redacted> or <redacted>")
    assert.strictEqual(scrub("nothing", undefined), "nothing")
    assert.strictEqual(scrub("nothing", ""), "nothing")
  })
})

const served = makeRouteTable(true)
const isPush = (method: string, url: string) => served.match(method, url)?.path === "/customSend"

describe("causeText (the log text of a 500)", () => {
  it("formats causes that carry values nested too deeply for effect's formatter, without throwing", () => {
    let arrays: unknown = 1
    let objects: unknown = "deep"
    for (let i = 0; i < 100_000; i++) {
      arrays = [arrays]
      objects = { a: objects }
    }
    const causes = [
      Cause.fail(arrays),
      Cause.die(objects),
      Cause.fail({ _tag: "Failed", message: "with a deep cause", cause: objects }),
      Cause.die(new Error("boom ds_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG", { cause: arrays }))
    ]
    for (const cause of causes) {
      const text = causeText(cause, "ds_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG")
      assert.isString(text)
      assert.notInclude(text, "ds_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG")
    }
    assert.include(causeText(causes[3]!, undefined), "boom")
    assert.include(causeText(causes[2]!, undefined), "with a deep cause")
  })
})

describe("causeLine (the one-line cause of a 503's log)", () => {
  it("names the error at the end of the cause chain, on one line, without a stack or the secret", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })
    // Node's connect to a name of several addresses: an AggregateError without a message of its own.
    const both = new AggregateError([new Error("connect ECONNREFUSED ::1:5432"), refused])
    const cases: ReadonlyArray<readonly [Cause.Cause<unknown>, string]> = [
      [Cause.fail(new StorageUnavailable({ cause: refused })), "connect ECONNREFUSED 127.0.0.1:5432"],
      [
        Cause.fail(new StorageUnavailable({ cause: both })),
        "connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432"
      ],
      [
        Cause.fail(
          new StorageUnavailable({ cause: new Error("wrapped", { cause: new Error("terminated\nunexpectedly") }) })
        ),
        "terminated unexpectedly"
      ],
      [Cause.fail(new StorageUnavailable({ cause: undefined })), "StorageUnavailable"],
      [Cause.fail(new StorageUnavailable({ cause: new Error("no ds_secret here") })), "no <redacted> here"],
      [Cause.interrupt("fiber" as never), "interrupted"]
    ]
    for (const [cause, line] of cases) assert.strictEqual(causeLine(cause, "ds_secret"), line)
  })
})

describe("ingest lane routing", () => {
  it("takes POST /customSend and /customSend/ with or without a query, nothing else", () => {
    for (const url of ["/customSend", "/customSend/", "/customSend?a=1", "/customSend/?a=1"])
      assert.isTrue(isPush("POST", url), url)
    for (const url of ["/customSendX", "/customSend//", "/customsend", "/customSend/x", "/"])
      assert.isFalse(isPush("POST", url), url)
    assert.isFalse(isPush("GET", "/customSend"))
  })

  it("takes POST /widgets/<stream> (Smashing), URL-decoded, one trailing slash and the query ignored", () => {
    const streamOf = (url: string) => served.match("POST", url)?.ingest?.params(url).streamName
    assert.strictEqual(streamOf("/widgets/visits"), "visits")
    assert.strictEqual(streamOf("/widgets/a%20b/?x=1"), "a b")
    assert.strictEqual(streamOf("/widgets/a%2Fb/"), "a/b")
    assert.strictEqual(served.match("POST", "/widgets/visits")?.path, "/widgets/:streamName")
    assert.strictEqual(served.match("POST", "/widgets/a%20b/?x=1")?.path, "/widgets/:streamName")
    for (const url of ["/widgets/", "/widgets//", "/widgets/a/b", "/widgets/%ZZ", "/widgetsx/a", "/widgets"])
      assert.isUndefined(served.match("POST", url), url)
    assert.isUndefined(served.match("GET", "/widgets/visits"))
  })
})

describe("rate limiter", () => {
  it("allows bursts of N, then one request per 1/N s, per key", () => {
    let now = 0
    const limiter = makeRateLimiter(2, () => now)
    assert.deepStrictEqual([limiter.take("a"), limiter.take("a"), limiter.take("a")], [0, 0, 1])
    assert.strictEqual(limiter.take("b"), 0)
    now = 499
    assert.strictEqual(limiter.take("a"), 1)
    now = 1000
    assert.strictEqual(limiter.take("a"), 0)
    now = 10_000
    assert.deepStrictEqual([limiter.take("a"), limiter.take("a"), limiter.take("a")], [0, 0, 1])
  })

  it("answers Retry-After in whole seconds of at least 1", () => {
    let now = 0
    const limiter = makeRateLimiter(0.25, () => now)
    assert.strictEqual(limiter.take("a"), 0)
    assert.strictEqual(limiter.take("a"), 4)
  })

  it("forgets idle keys when many are seen (a test that can fail)", () => {
    let now = 0
    const limiter = makeRateLimiter(1, () => now)
    for (let i = 0; i < 30_000; i++) limiter.take(`old${i}`)
    // Every bucket was just emptied: none is idle, none is forgotten.
    assert.strictEqual(limiter.size(), 30_000)
    now = 5_000
    // The old buckets have refilled (idle); the map's growth to 40,000 sweeps them, the new ones are kept.
    for (let i = 0; i < 20_000; i++) limiter.take(`new${i}`)
    assert.strictEqual(limiter.size(), 20_000)
    // Still correct after sweeps: a forgotten key starts with a full bucket, a kept one is still empty.
    assert.strictEqual(limiter.take("old1"), 0)
    assert.strictEqual(limiter.take("old1"), 1)
    assert.strictEqual(limiter.take("new1"), 1)
  })
})

describe("route table", () => {
  it("knows the methods of each path of the served API", () => {
    const routes = makeRouteTable(true)
    assert.deepStrictEqual(routes.allowed("/customSend"), ["POST"])
    assert.deepStrictEqual(routes.allowed("/customSend/"), ["POST"])
    assert.deepStrictEqual(routes.allowed("/api/v2/k/datastream/s?since=1"), ["GET", "HEAD"])
    assert.deepStrictEqual(routes.allowed("/admin/accounts/1/widgets"), ["GET", "HEAD", "POST"])
    assert.deepStrictEqual(routes.allowed("/admin/accounts/1/widgets/s"), ["DELETE"])
    assert.deepStrictEqual(routes.allowed("/docs"), ["GET", "HEAD"])
    assert.strictEqual(routes.allowed("/api/v2//datastream/s"), undefined)
    assert.strictEqual(routes.allowed("/nope"), undefined)
    assert.strictEqual(makeRouteTable(false).allowed("/admin/accounts"), undefined)
  })
})

describe("read body", () => {
  it("concatenates stored JSON with exact ts", () => {
    assert.strictEqual(readBodyText(renderEntries([])), '{"message":"Success!","data":[]}')
    assert.strictEqual(
      readBodyText(
        renderEntries([
          { ts: micros(1_700_000_000_000_001), json: '{"number":1}' },
          { ts: micros(1_700_000_001_000_000), json: '{"x":1,"y":2}' }
        ])
      ),
      '{"message":"Success!","data":[{"ts":1700000000.000001,"point":{"number":1}},{"ts":1700000001,"point":{"x":1,"y":2}}]}'
    )
  })
})
