import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
import {
  clientAddress,
  forwardedClient,
  forwardedHttps,
  parseBasePath,
  parseTrustProxy,
  pathUnder,
  type TrustedProxies
} from "../src/index.js"
import {
  admin,
  json,
  push,
  read,
  setupAccount,
  startServer,
  testAdminToken,
  type TestServer
} from "./support/server.js"

/**
 * Behind a reverse proxy (docs/api.md section 16): the base path and trust-list parsers, the `X-Forwarded-For` walk
 * (with a property: entries a client wrote left of the trusted chain never become the client), and a real server on
 * loopback under a base path and behind a trusted (and an untrusted) peer.
 */

const right = <A>(e: Either.Either<A, string>): A => {
  if (Either.isLeft(e)) throw new Error(`expected Right, got Left: ${e.left}`)
  return e.right
}
const left = <A>(e: Either.Either<A, string>): string => {
  if (Either.isRight(e)) throw new Error(`expected Left, got Right: ${JSON.stringify(e.right)}`)
  return e.left
}
const trust = (list: string): TrustedProxies => right(parseTrustProxy(list, "--trust-proxy"))

describe("parseBasePath", () => {
  it("accepts a leading slash and plain segments; / is the root", () => {
    for (const ok of ["/dashboards", "/tools/dash", "/a", "/x-1_y.z~"]) {
      assert.strictEqual(right(parseBasePath(ok, "--base-path")), ok)
    }
    assert.strictEqual(right(parseBasePath("/", "--base-path")), "")
    assert.strictEqual(right(parseBasePath(" /dash ", "--base-path")), "/dash")
  })
  it("refuses an empty value, a missing leading slash, a trailing slash, . and .., empty segments and other characters", () => {
    for (const bad of [
      "",
      "  ",
      "dash",
      "/dash/",
      "/a/../b",
      "/..",
      "/.",
      "//dash",
      "/a//b",
      "/da sh",
      "/da%2fsh",
      "/d?x",
      "/d#x"
    ]) {
      const message = left(parseBasePath(bad, "DASHSTREAM_BASE_PATH"))
      assert.match(message, /^DASHSTREAM_BASE_PATH must be a URL path such as \/dashboards/)
      assert.include(message, JSON.stringify(bad))
    }
  })
})

describe("pathUnder", () => {
  it("strips the base path; / for the prefix alone; undefined outside it", () => {
    assert.strictEqual(pathUnder("/dash/customSend", "/dash"), "/customSend")
    assert.strictEqual(pathUnder("/dash/api/v2/k/datastream/s?since=0", "/dash"), "/api/v2/k/datastream/s?since=0")
    assert.strictEqual(pathUnder("/dash", "/dash"), "/")
    assert.strictEqual(pathUnder("/dash?x=1", "/dash"), "/?x=1")
    assert.strictEqual(pathUnder("/dashboards/customSend", "/dash"), undefined)
    assert.strictEqual(pathUnder("/customSend", "/dash"), undefined)
    assert.strictEqual(pathUnder("/Dash/customSend", "/dash"), undefined)
    assert.strictEqual(pathUnder("*", "/dash"), undefined)
  })
})

describe("parseTrustProxy", () => {
  it("addresses and CIDR ranges, IPv4 and IPv6; IPv4 entries match IPv4-mapped peers", () => {
    const proxies = trust("127.0.0.1, 10.0.0.0/8,::1,fd00::/8,2001:db8::7")
    assert.deepStrictEqual(proxies.entries, ["127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8", "2001:db8::7"])
    assert.deepStrictEqual(proxies.everyone, [])
    for (const yes of [
      "127.0.0.1",
      "::ffff:127.0.0.1",
      "10.1.2.3",
      "::ffff:10.200.0.1",
      "::1",
      "fd12::1",
      "2001:db8::7"
    ]) {
      assert.isTrue(proxies.trusts(yes), yes)
    }
    for (const no of ["127.0.0.2", "11.0.0.1", "::2", "fe80::1", "2001:db8::8", "::ffff:127.0.0.2", "", "nonsense"]) {
      assert.isFalse(proxies.trusts(no), no)
    }
  })
  it("refuses what is not an address or a range, naming the entry", () => {
    for (const bad of [
      "",
      "localhost",
      "127.0.0.1/33",
      "::1/129",
      "10.0.0.0/x",
      "1.2.3.4,",
      "300.1.1.1",
      "10.0.0.0/-1",
      "[::1]",
      "[2001:db8::7]",
      "fe80::1%eth0",
      "fe80::/10%eth0",
      "127.0.0.1/08",
      "10.0.0.0/008",
      "::1/0128"
    ]) {
      const message = left(parseTrustProxy(bad, "--trust-proxy"))
      assert.match(message, /^--trust-proxy must be IP addresses or CIDR ranges separated by commas/, bad)
      assert.include(message, JSON.stringify(bad.split(",")[1] ?? bad), bad)
    }
  })
  it("refuses a range with host bits set, naming the network meant", () => {
    for (const [bad, network] of [
      ["10.0.0.1/8", "10.0.0.0/8"],
      ["127.0.0.1/0", "0.0.0.0/0"],
      ["192.168.1.77/24", "192.168.1.0/24"],
      ["172.16.5.4/12", "172.16.0.0/12"],
      ["fd00::1/8", "fd00::/8"],
      ["2001:db8:0:0:1::/64", "2001:db8::/64"],
      ["::ffff:10.1.2.3/104", "::ffff:a00:0/104"]
    ] as const) {
      assert.strictEqual(
        left(parseTrustProxy(`127.0.0.1,${bad}`, "--trust-proxy")),
        `--trust-proxy: ${bad} has host bits set past its /${bad.split("/")[1]} prefix; did you mean the network ${network}?`
      )
    }
    for (const ok of ["10.0.0.0/8", "0.0.0.0/0", "::/0", "fd00::/8", "2001:db8::/32", "10.0.0.1/32", "::1/128"]) {
      right(parseTrustProxy(ok, "--trust-proxy"))
    }
  })
  it("names the entries that trust every peer", () => {
    assert.deepStrictEqual(trust("127.0.0.1,0.0.0.0/0,::/0").everyone, ["0.0.0.0/0", "::/0"])
    assert.isTrue(trust("0.0.0.0/0").trusts("203.0.113.9"))
  })
})

describe("forwardedClient", () => {
  const proxies = trust("127.0.0.1,10.0.0.0/8")
  it("the last untrusted address, walking from the right past trusted proxies", () => {
    assert.strictEqual(forwardedClient("127.0.0.1", "203.0.113.7", proxies), "203.0.113.7")
    assert.strictEqual(forwardedClient("127.0.0.1", "6.6.6.6, 203.0.113.7, 10.0.0.5", proxies), "203.0.113.7")
    assert.strictEqual(forwardedClient("127.0.0.1", "6.6.6.6,203.0.113.7,10.0.0.5,127.0.0.1", proxies), "203.0.113.7")
    assert.strictEqual(forwardedClient("127.0.0.1", "2001:db8::1, 10.0.0.5", proxies), "2001:db8::1")
    assert.strictEqual(forwardedClient("127.0.0.1", "[2001:db8::1]", proxies), "2001:db8::1")
    assert.strictEqual(forwardedClient("127.0.0.1", "[2001:db8::1]:443, 10.0.0.5:80", proxies), "2001:db8::1")
    assert.strictEqual(forwardedClient("127.0.0.1", "203.0.113.7:5555", proxies), "203.0.113.7")
    assert.strictEqual(forwardedClient("::ffff:127.0.0.1", "::ffff:203.0.113.7", proxies), "203.0.113.7")
  })
  it("no header, an empty one: the peer; all trusted: the leftmost; malformed: stops at the last walked", () => {
    assert.strictEqual(forwardedClient("127.0.0.1", undefined, proxies), "127.0.0.1")
    assert.strictEqual(forwardedClient("::ffff:127.0.0.1", "", proxies), "127.0.0.1")
    assert.strictEqual(forwardedClient("127.0.0.1", "10.0.0.9, 10.0.0.5", proxies), "10.0.0.9")
    assert.strictEqual(forwardedClient("127.0.0.1", "203.0.113.7, garbage, 10.0.0.5", proxies), "10.0.0.5")
    assert.strictEqual(forwardedClient("127.0.0.1", "unknown", proxies), "127.0.0.1")
  })
  it("clientAddress shows an IPv4-mapped address as IPv4", () => {
    assert.strictEqual(clientAddress("::ffff:192.0.2.1"), "192.0.2.1")
    assert.strictEqual(clientAddress("2001:db8::1"), "2001:db8::1")
  })
  it("forwardedHttps: the first value of X-Forwarded-Proto", () => {
    assert.isTrue(forwardedHttps("https"))
    assert.isTrue(forwardedHttps("HTTPS, http"))
    assert.isFalse(forwardedHttps("http, https"))
    assert.isFalse(forwardedHttps(undefined))
    assert.isFalse(forwardedHttps(""))
  })

  // Trusted: 127.0.0.0/8 and 10.0.0.0/8. Clients: anything else. Spoofed entries: anything at all, trusted addresses,
  // garbage and IPv6 included.
  const octet = fc.integer({ min: 0, max: 255 })
  const trustedHop = fc.oneof(
    fc.tuple(octet, octet, octet).map(([a, b, c]) => `10.${a}.${b}.${c}`),
    fc.tuple(octet, octet, octet).map(([a, b, c]) => `127.${a}.${b}.${c}`)
  )
  const untrusted = fc.oneof(
    fc.tuple(fc.integer({ min: 11, max: 126 }), octet, octet, octet).map(([a, b, c, d]) => `${a}.${b}.${c}.${d}`),
    fc
      .tuple(fc.integer({ min: 0x2001, max: 0x2fff }), fc.integer({ min: 0, max: 0xffff }))
      .map(([a, b]) => `${a.toString(16)}:db8::${b.toString(16)}`)
  )
  const spoofed = fc.oneof(untrusted, trustedHop, fc.constantFrom("unknown", "", "1.2.3", "::ffff:10.0.0.1", "[::1]"))
  const ranges = trust("127.0.0.0/8,10.0.0.0/8")

  it.prop(
    "entries left of the real client are never the client, whatever the client wrote",
    [fc.array(spoofed, { maxLength: 6 }), untrusted, fc.array(trustedHop, { maxLength: 4 }), trustedHop],
    ([forged, client, chain, peer]) => {
      const header = [...forged, client, ...chain].join(", ")
      assert.strictEqual(forwardedClient(peer, header, ranges), client)
    }
  )
})

describe("a server under a base path", () => {
  let server: TestServer
  let account: { id: string; accessKey: string }
  beforeAll(async () => {
    // The console page tells which root it was given: `./` at /dash/console, `../` at /dash/console/.
    server = await startServer({
      basePath: "/dash",
      console: { html: (root) => `root=${root}`, headers: {}, assets: () => new Map() }
    })
    account = await setupAccount(server, [["revenue", "number"]])
  })
  afterAll(() => server.close())
  const origin = () => server.url.slice(0, -"/dash".length)

  it("prints its URL with the base path, and pushes and reads under it", async () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/dash$/)
    assert.strictEqual(
      (await push(server, { accessKey: account.accessKey, streamName: "revenue", point: 5 })).status,
      200
    )
    const r = await json(await read(server, account.accessKey, "revenue"))
    assert.strictEqual(r.status, 200)
    assert.deepStrictEqual(r.body.data[0].point, { number: 5 })
  })

  it("answers 404 for every path outside it, the root paths among them", async () => {
    for (const path of ["/customSend", "/dashx/customSend", "/healthz", "/console", "/metrics", "/docs", "/"]) {
      const res = await fetch(`${origin()}${path}`, {
        method: path === "/customSend" ? "POST" : "GET",
        body: path === "/customSend" ? "{}" : null
      })
      const body = await json(res)
      assert.strictEqual(body.status, 404, path)
      assert.strictEqual(body.body.error.code, "not_found", path)
    }
    for (const path of ["/healthz", "/metrics", "/docs", "/openapi.json", "/console"]) {
      assert.strictEqual((await fetch(`${server.url}${path}`)).status, 200, path)
    }
    assert.strictEqual(await (await fetch(`${server.url}/console`)).text(), "root=./")
    assert.strictEqual(await (await fetch(`${server.url}/console/`)).text(), "root=../")
  })

  it("returns view URLs with the base path, and serves the page with URLs relative to it", async () => {
    const created = await admin(server, "POST", `/admin/accounts/${account.id}/dashboards`, { name: "ops" })
    assert.strictEqual(created.status, 201)
    assert.match(created.json.url, /^\/dash\/d\/[A-Za-z0-9_-]+$/)
    const token = created.json.viewToken as string
    for (const [path, root] of [
      [`/d/${token}`, "../"],
      [`/d/${token}/`, "../../"]
    ] as const) {
      const html = await (await fetch(`${server.url}${path}`)).text()
      const script = /<script src="([^"]+)"/.exec(html)![1]!
      const style = /<link rel="stylesheet" href="([^"]+)"/.exec(html)![1]!
      const config = JSON.parse(/<script type="application\/json" id="ds-dashboard">([^<]*)<\/script>/.exec(html)![1]!)
      for (const url of [script, style, config.maps.world, config.eventsPath]) assert.isTrue(url.startsWith(root), url)
      // Each resolves, against the page's URL, to a file or stream under the base path.
      const base = `${server.url}${path}`
      for (const url of [script, style, config.maps.world]) {
        assert.strictEqual((await fetch(new URL(url, base))).status, 200, url)
      }
      assert.strictEqual(new URL(config.eventsPath, base).pathname, `/dash/d/${token}/events`)
    }
  })

  it("the OpenAPI document names the base path as its server; the console cookie's Path is it", async () => {
    const doc = await json(await fetch(`${server.url}/openapi.json`))
    assert.deepStrictEqual(doc.body.servers, [{ url: "/dash" }])
    const res = await fetch(`${server.url}/console/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: testAdminToken })
    })
    assert.strictEqual(res.status, 204)
    assert.include(res.headers.get("set-cookie")!, "; Path=/dash;")
  })
})

/** Fails a sign-in with `headers`; the status. */
const wrongSignIn = async (server: TestServer, headers: Record<string, string>): Promise<number> => {
  const res = await fetch(`${server.url}/console/session`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ token: "wrong" })
  })
  await res.arrayBuffer()
  return res.status
}

/** Six failed sign-ins: the sixth is 429 (docs/api.md section 14). */
const throttle = async (server: TestServer, headers: Record<string, string>) => {
  for (let i = 0; i < 5; i++) assert.strictEqual(await wrongSignIn(server, headers), 401)
  assert.strictEqual(await wrongSignIn(server, headers), 429)
}

const signInCookie = async (server: TestServer, headers: Record<string, string>): Promise<string> => {
  const res = await fetch(`${server.url}/console/session`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ token: testAdminToken })
  })
  assert.strictEqual(res.status, 204)
  return res.headers.get("set-cookie")!
}

describe("forwarded headers from a trusted proxy", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ trustProxy: trust("127.0.0.1"), logRequests: true })
  })
  afterAll(() => server.close())

  it("two clients are throttled separately and logged with their own addresses; a spoofed entry is not believed", async () => {
    await throttle(server, { "x-forwarded-for": "198.51.100.1" })
    // Another client behind the same proxy, which wrote the first client's address first: not throttled.
    assert.strictEqual(await wrongSignIn(server, { "x-forwarded-for": "198.51.100.1, 198.51.100.2" }), 401)
    await new Promise((r) => setTimeout(r, 50))
    const lines = server.logs.filter((l) => l.includes("POST /console/session"))
    assert.strictEqual(lines.filter((l) => l.includes("from 198.51.100.1")).length, 6)
    assert.strictEqual(lines.filter((l) => l.includes("from 198.51.100.2")).length, 1)
    assert.isFalse(lines.some((l) => l.includes("from 127.0.0.1")))
  })

  it("X-Forwarded-Proto https makes the console cookie Secure; http does not", async () => {
    assert.include(await signInCookie(server, { "x-forwarded-proto": "https" }), "; Secure")
    assert.notInclude(await signInCookie(server, { "x-forwarded-proto": "http" }), "Secure")
    assert.notInclude(await signInCookie(server, {}), "Secure")
  })
})

describe("forwarded headers from a peer that is not trusted", () => {
  for (const trustProxy of [undefined, "10.0.0.0/8,::2"]) {
    describe(trustProxy === undefined ? "without --trust-proxy" : `with --trust-proxy ${trustProxy}`, () => {
      let server: TestServer
      beforeAll(async () => {
        server = await startServer({
          logRequests: true,
          ...(trustProxy === undefined ? {} : { trustProxy: trust(trustProxy) })
        })
      })
      afterAll(() => server.close())

      it("are ignored: the throttle and the log see the real peer, the cookie is not Secure", async () => {
        const headers = { "x-forwarded-proto": "https", "x-forwarded-for": "198.51.100.9" }
        assert.notInclude(await signInCookie(server, headers), "Secure")
        await throttle(server, { "x-forwarded-for": "198.51.100.1" })
        // A different forged address does not escape the throttle: it counts by the peer.
        assert.strictEqual(await wrongSignIn(server, { "x-forwarded-for": "198.51.100.2" }), 429)
        await new Promise((r) => setTimeout(r, 50))
        const lines = server.logs.filter((l) => l.includes("POST /console/session"))
        assert.strictEqual(lines.length, 8)
        assert.isTrue(lines.every((l) => l.includes("from 127.0.0.1")))
      })
    })
  }
})
