import { existsSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, dirname, join, relative } from "node:path"
import { afterEach, describe, expect, inject, it } from "vitest"
import { screenshotPath } from "./support/screenshots.js"
import { root } from "./support.js"

/**
 * The README's screenshots are written only by `pnpm docs:screenshots` (which sets `DASHSTREAM_SCREENSHOTS=1`): the
 * browser tests that take them write to a directory of the run's own otherwise (removed after it), so `pnpm test` in a
 * clean clone leaves `git status` clean and runs at once never write one file.
 */
describe("where the browser tests save the README's screenshots", () => {
  const saved = process.env["DASHSTREAM_SCREENSHOTS"]
  afterEach(() => {
    if (saved === undefined) delete process.env["DASHSTREAM_SCREENSHOTS"]
    else process.env["DASHSTREAM_SCREENSHOTS"] = saved
  })

  it("in this run's own directory under the tests, docs/ under pnpm docs:screenshots", () => {
    delete process.env["DASHSTREAM_SCREENSHOTS"]
    const underTests = screenshotPath("demo.png")
    expect(relative(root, underTests).startsWith(".."), underTests).toBe(true)
    // A directory made for this run (mkdtemp, removed after it), never a path that runs at once share.
    const dir = dirname(underTests)
    expect(dir).toBe(inject("screenshotDir"))
    expect(dirname(dir)).toBe(tmpdir())
    expect(basename(dir)).toMatch(/^dashstream-screenshots-[A-Za-z0-9]{6}$/)
    expect(statSync(dir).isDirectory()).toBe(true)
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
