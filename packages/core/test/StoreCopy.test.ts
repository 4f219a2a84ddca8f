import { assert, describe, it } from "@effect/vitest"
import { schemaProblem } from "../src/index.js"

describe("schemaProblem (which databases a copy reads, docs/api.md section 12)", () => {
  const known = ["0001_initial", "0002_live", "0003_dashboards"]

  it("accepts exactly this version's migrations, in any order", () => {
    assert.strictEqual(schemaProblem(known, known), undefined)
    assert.strictEqual(schemaProblem([...known].reverse(), known), undefined)
  })

  it("tells no schema, an older one and a newer one apart", () => {
    assert.strictEqual(schemaProblem([], known), "not-dashstream")
    assert.strictEqual(schemaProblem(known.slice(0, 2), known), "older")
    assert.strictEqual(schemaProblem([...known, "0004_future"], known), "newer")
    // A migration this version does not know wins over one it misses: an older Dashstream cannot read it either.
    assert.strictEqual(schemaProblem(["0001_initial", "0009_other"], known), "newer")
  })
})
