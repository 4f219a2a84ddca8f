import { existsSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { screenshotPath } from "./support/screenshots.js"
import { root } from "./support.js"

/**
 * The README's screenshots are written only by `pnpm docs:screenshots` (which sets `DASHSTREAM_SCREENSHOTS=1`): the
 * browser tests that take them write to the temporary directory otherwise, so `pnpm test` in a clean clone leaves
 * `git status` clean.
 */
describe("where the browser tests save the README's screenshots", () => {
  const saved = process.env["DASHSTREAM_SCREENSHOTS"]
  afterEach(() => {
    if (saved === undefined) delete process.env["DASHSTREAM_SCREENSHOTS"]
    else process.env["DASHSTREAM_SCREENSHOTS"] = saved
  })

  it("outside the repository under the tests, docs/ under pnpm docs:screenshots", () => {
    delete process.env["DASHSTREAM_SCREENSHOTS"]
    const underTests = screenshotPath("demo.png")
    expect(relative(root, underTests).startsWith(".."), underTests).toBe(true)
    process.env["DASHSTREAM_SCREENSHOTS"] = "1"
    expect(screenshotPath("demo.png")).toBe(join(root, "docs", "demo.png"))
  })

  it("pnpm docs:screenshots runs the demo's test files, which write the README's pictures of it", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }
    const script = pkg.scripts["docs:screenshots"]!
    expect(script).toContain("DASHSTREAM_SCREENSHOTS=1 vitest run")
    for (const file of ["test/e2e/demo.browser.test.ts", "test/e2e/demoPhone.browser.test.ts"]) {
      expect(script).toContain(file)
    }
    for (const name of ["demo.png", "demo-phone.png"]) expect(existsSync(join(root, "docs", name)), name).toBe(true)
  })
})
