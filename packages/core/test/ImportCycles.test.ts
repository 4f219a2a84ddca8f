import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { importCycles } from "../../../test/importCycles.js"
import { repoRoot } from "../../../test/build.js"

// Lives in core's tests because core is the package every other one depends on; it checks them all.
describe("import circles", () => {
  it("no package's src has one (static, dynamic, type-only or re-export)", () => {
    const packages = join(repoRoot, "packages")
    const dirs = readdirSync(packages).map((name) => join(packages, name, "src"))
    expect(importCycles(repoRoot, dirs)).toEqual([])
  })

  describe("the check itself", () => {
    const dir = mkdtempSync(join(tmpdir(), "dashstream-cycles-"))
    afterAll(() => rmSync(dir, { recursive: true, force: true }))
    const write = (files: Record<string, string>) => {
      const root = mkdtempSync(join(dir, "case-"))
      for (const [name, text] of Object.entries(files)) {
        mkdirSync(join(root, "src", name, ".."), { recursive: true })
        writeFileSync(join(root, "src", name), text)
      }
      writeFileSync(join(root, "tsconfig.base.json"), JSON.stringify({ compilerOptions: { module: "NodeNext" } }))
      return root
    }
    const cycles = (files: Record<string, string>) => {
      const root = write(files)
      return importCycles(root, [join(root, "src")])
    }

    it("finds a circle of type-only imports, through a subfolder", () => {
      expect(
        cycles({
          "a.ts": `import type { B } from "./internal/b.js"\nexport type A = { b: B }`,
          "internal/b.ts": `import type { A } from "../a.js"\nexport type B = { a?: A }`,
          "c.ts": `import type { A } from "./a.js"\nexport type C = A`
        })
      ).toEqual([["src/a.ts", "src/internal/b.ts"]])
    })

    it("finds a circle closed by a dynamic import and a re-export", () => {
      expect(
        cycles({
          "a.ts": `export const run = () => import("./b.js")`,
          "b.ts": `export * from "./c.js"`,
          "c.ts": `import { run } from "./a.js"\nexport const again = run`
        })
      ).toEqual([["src/a.ts", "src/b.ts", "src/c.ts"]])
    })

    it("passes a graph without circles, and ignores other packages' imports", () => {
      expect(
        cycles({
          "a.ts": `import { b } from "./b.js"\nimport { Effect } from "effect"\nexport const a = [b, Effect]`,
          "b.ts": `export const b = 1`
        })
      ).toEqual([])
    })
  })
})
