import { assert, describe, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { gzipSync } from "node:zlib"
import {
  assets,
  contentSecurityPolicy,
  jsonForScript,
  manifest,
  pageHeaders,
  pageHtml,
  rotationPageHtml
} from "../src/index.js"

const hostile = `</script><script>window.pwned=1</script><!-- \u2028 & "quoted"`

const model = {
  name: `Ops ${hostile}`,
  theme: "dark" as const,
  eventsPath: "/d/tok/events",
  tiles: [
    { streamName: `s${hostile}`, title: hostile, type: "number" as const, x: 0, y: 0, w: 3, h: 2, deleted: false }
  ]
}

describe("pageHtml", () => {
  const html = pageHtml(model)
  it("carries the layout as a JSON data block that no string can break out of", () => {
    const block = /<script type="application\/json" id="ds-dashboard">([^<]*)<\/script>/.exec(html)
    assert.isNotNull(block)
    const parsed = JSON.parse(block![1]!)
    assert.strictEqual(parsed.name, model.name)
    assert.strictEqual(parsed.tiles[0].title, hostile)
    assert.strictEqual(parsed.eventsPath, "/d/tok/events")
    assert.deepStrictEqual(parsed.maps, manifest().maps)
    assert.notInclude(html, "<script>window.pwned")
    assert.notInclude(html, "<!--")
  })
  it("puts its asset and map outline URLs under `root`, relative to where it is served (docs/api.md section 16)", () => {
    const relative = pageHtml({ ...model, eventsPath: "../d/tok/events", root: "../" })
    assert.include(relative, `<script src="..${manifest().script}" defer>`)
    assert.include(relative, `<link rel="stylesheet" href="..${manifest().style}">`)
    const parsed = JSON.parse(
      /<script type="application\/json" id="ds-dashboard">([^<]*)<\/script>/.exec(relative)![1]!
    )
    assert.deepStrictEqual(parsed.maps, { world: `..${manifest().maps.world}`, usa: `..${manifest().maps.usa}` })
    assert.strictEqual(parsed.eventsPath, "../d/tok/events")
    assert.notProperty(parsed, "root")
  })
  it("loads exactly one script and one stylesheet, hashed, and no inline script", () => {
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0])
    assert.deepStrictEqual(scripts, [
      '<script type="application/json" id="ds-dashboard">',
      `<script src="${manifest().script}" defer>`
    ])
    assert.match(manifest().script, /^\/assets\/app\.[0-9a-f]{10}\.js$/)
    assert.match(manifest().style, /^\/assets\/app\.[0-9a-f]{10}\.css$/)
    assert.strictEqual([...html.matchAll(/<link rel="stylesheet"/g)].length, 1)
    assert.include(html, "<title>Ops &#60;/script&#62;")
    assert.include(html, 'data-theme="dark"')
    assert.include(pageHtml({ ...model, theme: "light" }), 'data-theme="light"')
  })
  it("jsonForScript escapes < > & and line separators", () => {
    assert.strictEqual(jsonForScript({ a: "</x>&\u2028" }), '{"a":"\\u003c/x\\u003e\\u0026\\u2028"}')
  })
})

describe("rotationPageHtml", () => {
  const rotation = {
    name: `Wall ${hostile}`,
    intervalSeconds: 30,
    dashboardIds: ["b", "a", "b"],
    dashboards: [
      { id: "b", name: `B ${hostile}`, tiles: model.tiles },
      { id: "a", name: "A", tiles: [] }
    ],
    eventsPath: "/r/tok/events",
    theme: "dark" as const
  }
  it("carries the rotation as the #ds-rotation data block, with the same one script and stylesheet", () => {
    const html = rotationPageHtml(rotation)
    const block = /<script type="application\/json" id="ds-rotation">([^<]*)<\/script>/.exec(html)
    assert.isNotNull(block)
    const parsed = JSON.parse(block![1]!)
    assert.deepStrictEqual(
      [parsed.name, parsed.intervalSeconds, parsed.dashboardIds, parsed.eventsPath],
      [rotation.name, 30, ["b", "a", "b"], "/r/tok/events"]
    )
    assert.deepStrictEqual(
      parsed.dashboards.map((d: { id: string; name: string }) => [d.id, d.name]),
      [
        ["b", `B ${hostile}`],
        ["a", "A"]
      ]
    )
    assert.strictEqual(parsed.dashboards[0].tiles[0].title, hostile)
    assert.notInclude(html, "<script>window.pwned")
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0])
    assert.deepStrictEqual(scripts, [
      '<script type="application/json" id="ds-rotation">',
      `<script src="${manifest().script}" defer>`
    ])
  })
  it("is titled with the first dashboard's name, or the rotation's when it has none", () => {
    assert.include(rotationPageHtml(rotation), "<title>B &#60;/script&#62;")
    assert.include(rotationPageHtml({ ...rotation, dashboardIds: [], dashboards: [] }), "<title>Wall &#60;/script&#62;")
  })
})

describe("contentSecurityPolicy", () => {
  const directives = new Map(
    contentSecurityPolicy.split(";").map((d) => {
      const [name, ...values] = d.trim().split(/\s+/)
      return [name!, values] as const
    })
  )
  it("allows scripts and connections only from the page's origin, never inline", () => {
    assert.deepStrictEqual(directives.get("script-src"), ["'self'"])
    assert.deepStrictEqual(directives.get("connect-src"), ["'self'"])
    assert.deepStrictEqual(directives.get("default-src"), ["'none'"])
    assert.notInclude(contentSecurityPolicy, "unsafe-eval")
    assert.notInclude(directives.get("script-src")!.join(" "), "unsafe-inline")
  })
  it("allows images of any http(s) origin and data:", () => {
    assert.deepStrictEqual(directives.get("img-src"), ["'self'", "http:", "https:", "data:"])
    assert.deepStrictEqual(directives.get("object-src"), ["'none'"])
    assert.deepStrictEqual(directives.get("base-uri"), ["'none'"])
  })
  it("is sent with no-referrer (the URL carries the view token)", () => {
    assert.strictEqual(pageHeaders["Content-Security-Policy"], contentSecurityPolicy)
    assert.strictEqual(pageHeaders["Referrer-Policy"], "no-referrer")
    assert.include(pageHtml(model), '<meta name="referrer" content="no-referrer">')
  })
})

describe("assets", () => {
  const files = assets()
  it("serves the script, the stylesheet, both map outlines and the icon under hashed names", () => {
    const m = manifest()
    assert.strictEqual(files.get(m.script)?.contentType, "text/javascript; charset=utf-8")
    assert.strictEqual(files.get(m.style)?.contentType, "text/css; charset=utf-8")
    for (const url of [m.maps.world, m.maps.usa]) {
      const topology = JSON.parse(files.get(url)!.body.toString("utf8"))
      assert.strictEqual(topology.type, "Topology")
    }
    assert.strictEqual(files.get(m.favicon.svg)?.contentType, "image/svg+xml")
    assert.match(files.get(m.favicon.svg)!.body.toString("utf8"), /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/)
    const ico = files.get(m.favicon.ico)!
    assert.strictEqual(ico.contentType, "image/x-icon")
    // ICONDIR: reserved 0, type 1 (icon), one image of 32x32 at 32 bits per pixel.
    assert.deepStrictEqual([ico.body.readUInt16LE(0), ico.body.readUInt16LE(2), ico.body.readUInt16LE(4)], [0, 1, 1])
    assert.deepStrictEqual([ico.body[6], ico.body[7], ico.body.readUInt16LE(12)], [32, 32, 32])
    assert.strictEqual(ico.body.length, 22 + ico.body.readUInt32LE(14))
    assert.strictEqual(files.size, 6)
  })
  it("the page's total download is at most 300 KiB gzipped", () => {
    // Level 9, as the server compresses the page's files (http's pageLane.ts) and the build prints the total.
    const total = [...files.values()].reduce((n, a) => n + gzipSync(a.body, { level: 9 }).length, 0)
    assert.isAtMost(total, 300 * 1024)
  })
  it("the bundle carries no eval and no inline-script sink of pushed strings", () => {
    const js = readFileSync(new URL(`../bundle${manifest().script}`, import.meta.url), "utf8")
    assert.notMatch(js, /\beval\(/)
  })
})

describe("browser source", () => {
  it("never parses pushed strings as HTML (no innerHTML, outerHTML, insertAdjacentHTML, document.write)", () => {
    const dir = new URL("../src/browser/", import.meta.url)
    const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"))
    assert.isAbove(files.length, 40)
    for (const f of files) {
      const code = readFileSync(new URL(f, dir), "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "")
      assert.notMatch(code, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/, f)
    }
  })
})
