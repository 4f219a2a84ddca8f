import { assert, describe, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { gzipSync } from "node:zlib"
import { manifest as dashboardManifest } from "@dashstream/dashboard-web"
import { assets, consolePage, contentSecurityPolicy, manifest, pageHeaders, pageHtml } from "../src/index.js"

describe("pageHtml", () => {
  const html = pageHtml()
  it("loads exactly one script and one stylesheet, hashed and apart from the dashboard page's, and no inline script", () => {
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0])
    assert.deepStrictEqual(scripts, [
      '<script type="application/json" id="ds-console">',
      `<script src="${manifest().script}" defer>`
    ])
    assert.match(manifest().script, /^\/console\/assets\/app\.[0-9a-f]{10}\.js$/)
    assert.match(manifest().style, /^\/console\/assets\/app\.[0-9a-f]{10}\.css$/)
    assert.strictEqual([...html.matchAll(/<link rel="stylesheet"/g)].length, 1)
  })
  it("puts its asset and map outline URLs under the root it is given (docs/api.md section 16: `./` at /console)", () => {
    const relative = pageHtml("./")
    assert.include(relative, `<script src=".${manifest().script}" defer>`)
    assert.include(relative, `<link rel="stylesheet" href=".${manifest().style}">`)
    const config = JSON.parse(/<script type="application\/json" id="ds-console">([^<]*)<\/script>/.exec(relative)![1]!)
    assert.deepStrictEqual(config.maps, {
      world: `.${dashboardManifest().maps.world}`,
      usa: `.${dashboardManifest().maps.usa}`
    })
  })
  it("carries the dashboard page's map outline URLs and nothing secret", () => {
    const block = /<script type="application\/json" id="ds-console">([^<]*)<\/script>/.exec(html)
    assert.isNotNull(block)
    assert.deepStrictEqual(JSON.parse(block![1]!), { maps: dashboardManifest().maps })
  })
})

describe("contentSecurityPolicy", () => {
  const directives = new Map(
    contentSecurityPolicy.split(";").map((d) => {
      const [name, ...values] = d.trim().split(/\s+/)
      return [name!, values] as const
    })
  )
  it("allows scripts and connections only from the page's origin, never inline or eval", () => {
    assert.deepStrictEqual(directives.get("default-src"), ["'none'"])
    assert.deepStrictEqual(directives.get("script-src"), ["'self'"])
    assert.deepStrictEqual(directives.get("connect-src"), ["'self'"])
    assert.notInclude(contentSecurityPolicy, "unsafe-eval")
  })
  it("may not be framed by another page (the console changes things)", () => {
    assert.deepStrictEqual(directives.get("frame-ancestors"), ["'none'"])
    assert.deepStrictEqual(directives.get("form-action"), ["'none'"])
  })
  it("is sent with no-referrer, nosniff and no-store", () => {
    assert.strictEqual(pageHeaders["Content-Security-Policy"], contentSecurityPolicy)
    assert.strictEqual(pageHeaders["Referrer-Policy"], "no-referrer")
    assert.strictEqual(pageHeaders["X-Content-Type-Options"], "nosniff")
    assert.strictEqual(pageHeaders["Cache-Control"], "no-store")
  })
})

describe("assets", () => {
  const files = assets()
  it("are the script and the stylesheet, under the console's path, apart from the dashboard page's files", () => {
    const m = manifest()
    assert.strictEqual(files.get(m.script)?.contentType, "text/javascript; charset=utf-8")
    assert.strictEqual(files.get(m.style)?.contentType, "text/css; charset=utf-8")
    assert.strictEqual(files.size, 2)
    for (const url of files.keys()) assert.isTrue(url.startsWith("/console/assets/"), url)
    assert.strictEqual(consolePage.assets(), files)
    assert.strictEqual(consolePage.html(), pageHtml())
    assert.strictEqual(consolePage.headers, pageHeaders)
  })
  it("the console's script and style are at most 300 KiB gzipped (the budget the build prints)", () => {
    const total = [...files.values()].reduce((n, a) => n + gzipSync(a.body, { level: 9 }).length, 0)
    assert.isAtMost(total, 300 * 1024)
  })
  it("the bundle carries no eval", () => {
    const js = readFileSync(new URL(`../bundle/${manifest().files[manifest().script]!.file}`, import.meta.url), "utf8")
    assert.notMatch(js, /\beval\(/)
  })
})

describe("browser source", () => {
  it("never parses strings as HTML and never stores anything in the browser (the token included)", () => {
    const dir = new URL("../src/browser/", import.meta.url)
    const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => /\.tsx?$/.test(f))
    assert.isAbove(files.length, 10)
    for (const f of files) {
      const code = readFileSync(new URL(f, dir), "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "")
      assert.notMatch(code, /innerHTML|outerHTML|insertAdjacentHTML|dangerouslySetInnerHTML|document\.write/, f)
      assert.notMatch(code, /localStorage|sessionStorage|indexedDB|document\.cookie/, f)
    }
  })
})
