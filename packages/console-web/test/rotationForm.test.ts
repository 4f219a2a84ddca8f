import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { intervalText, moved, removedAt, rotationBody, rotationErrorTarget } from "../src/browser/rotationForm.js"

describe("rotationBody", () => {
  it("sends the interval as a number when it reads as one", () => {
    assert.deepStrictEqual(rotationBody({ name: "Wall", interval: " 30 ", dashboardIds: ["a", "b"] }), {
      name: "Wall",
      dashboardIds: ["a", "b"],
      intervalSeconds: 30
    })
    // Out of bounds or fractional: still a number, for the server to refuse with its path.
    assert.strictEqual(rotationBody({ name: "", interval: "2.5", dashboardIds: [] }).intervalSeconds, 2.5)
  })
  it("sends text that is no number as it was typed (the server answers with path intervalSeconds)", () => {
    assert.strictEqual(
      rotationBody({ name: "W", interval: "soon", dashboardIds: [] }).intervalSeconds as unknown,
      "soon"
    )
    assert.strictEqual(rotationBody({ name: "W", interval: "", dashboardIds: [] }).intervalSeconds as unknown, "")
  })
})

describe("moved and removedAt", () => {
  it("move an item up or down one place", () => {
    assert.deepStrictEqual(moved(["a", "b", "c"], 2, -1), ["a", "c", "b"])
    assert.deepStrictEqual(moved(["a", "b", "c"], 0, 1), ["b", "a", "c"])
  })
  it("leave the list as it is at its ends", () => {
    const list = ["a", "b"]
    assert.strictEqual(moved(list, 0, -1), list)
    assert.strictEqual(moved(list, 1, 1), list)
  })
  it("keep every item (a permutation), and moving back undoes a move", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer(), { minLength: 1, maxLength: 20 }),
        fc.nat(),
        fc.constantFrom(-1, 1),
        (list, i, by) => {
          const index = i % list.length
          const next = moved(list, index, by)
          assert.deepStrictEqual([...next].sort(), [...list].sort())
          if (next !== list) assert.deepStrictEqual(moved(next, index + by, -by), list)
        }
      )
    )
  })
  it("removedAt drops one item, however often it is in the list", () => {
    assert.deepStrictEqual(removedAt(["a", "b", "a"], 2), ["a", "b"])
  })
})

describe("rotationErrorTarget", () => {
  it("names the field of the path", () => {
    assert.deepStrictEqual(rotationErrorTarget("name"), { kind: "name" })
    assert.deepStrictEqual(rotationErrorTarget("intervalSeconds"), { kind: "interval" })
    assert.deepStrictEqual(rotationErrorTarget("dashboardIds"), { kind: "dashboards" })
    assert.deepStrictEqual(rotationErrorTarget("dashboardIds[12]"), { kind: "dashboard", index: 12 })
  })
  it("anything else is the form's", () => {
    for (const path of [undefined, "", "tiles[0]", "dashboardIds[x]", "dashboardIds[1].id"])
      assert.deepStrictEqual(rotationErrorTarget(path), { kind: "form" })
  })
})

describe("intervalText", () => {
  it("reads as a person says it", () => {
    assert.strictEqual(intervalText(5), "5 s")
    assert.strictEqual(intervalText(60), "1 min")
    assert.strictEqual(intervalText(90), "1 min 30 s")
    assert.strictEqual(intervalText(3600), "1 h")
  })
})
