import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { DeadlineQueue } from "../src/alerts/DeadlineQueue.js"

/**
 * The one queue of every alert rule's deadline: against a plain map of key to deadline, for any script of sets,
 * removals and pops of what is due.
 */

type Op =
  | { readonly op: "set"; readonly key: number; readonly at: number | null }
  | { readonly op: "delete"; readonly key: number }
  | { readonly op: "pop"; readonly now: number }

// Mostly sets and deletes, so the heap grows to dozens of keys between pops.
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant("set" as const),
      key: fc.integer({ min: 0, max: 63 }),
      at: fc.option(fc.integer({ min: 0, max: 1000 }), { freq: 8 })
    })
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("delete" as const), key: fc.integer({ min: 0, max: 63 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("pop" as const), now: fc.integer({ min: 0, max: 1000 }) }) }
)

describe("DeadlineQueue", () => {
  it("next is the earliest deadline; popDue returns exactly the due keys, earliest first", () => {
    const queue = DeadlineQueue.from<string>([
      ["a", 30],
      ["b", 10],
      ["c", null],
      ["d", 20]
    ])
    assert.strictEqual(queue.size, 3)
    assert.strictEqual(queue.next(), 10)
    assert.deepStrictEqual(queue.popDue(9), [])
    assert.deepStrictEqual(queue.popDue(20), ["b", "d"])
    queue.set("a", 5)
    queue.set("e", 7)
    assert.strictEqual(queue.get("a"), 5)
    assert.isTrue(queue.delete("e"))
    assert.isFalse(queue.delete("e"))
    assert.deepStrictEqual(queue.popDue(100), ["a"])
    assert.strictEqual(queue.next(), undefined)
  })

  it("a key moved into a removed key's place under a later parent rises above it", () => {
    const queue = DeadlineQueue.from<number>([
      [0, 1],
      [1, 100],
      [2, 2],
      [3, 101],
      [4, 102],
      [5, 3]
    ])
    // Key 5 (3) takes the place of key 3, under key 1 (100); then the keys above it move later.
    queue.delete(3)
    queue.set(0, 500)
    queue.set(2, 600)
    assert.strictEqual(queue.next(), 3)
    assert.deepStrictEqual(queue.popDue(1000), [5, 1, 4, 0, 2])
  })

  it("agrees with a plain map for any script of sets, deletes and pops", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 400 }), (ops) => {
        const queue = new DeadlineQueue<number>()
        const model = new Map<number, number>()
        for (const op of ops) {
          if (op.op === "set") {
            queue.set(op.key, op.at)
            if (op.at === null) model.delete(op.key)
            else model.set(op.key, op.at)
          } else if (op.op === "delete") {
            assert.strictEqual(queue.delete(op.key), model.delete(op.key))
          } else {
            const due = queue.popDue(op.now)
            const expected = [...model].filter(([, at]) => at <= op.now)
            assert.sameMembers(
              due,
              expected.map(([key]) => key)
            )
            // Earliest first.
            const times = due.map((key) => model.get(key)!)
            assert.deepStrictEqual(
              times,
              [...times].sort((a, b) => a - b)
            )
            for (const key of due) model.delete(key)
          }
          assert.strictEqual(queue.size, model.size)
          const earliest = model.size === 0 ? undefined : Math.min(...model.values())
          assert.strictEqual(queue.next(), earliest)
          for (const [key, at] of model) assert.strictEqual(queue.get(key), at)
        }
      }),
      { numRuns: 1000 }
    )
  })
})
