import { assert, describe, it } from "@effect/vitest"
import { Batcher, type BatcherOptions } from "../src/internal/batcher.js"

/** Resolves after the current turn of the event loop (and its `setImmediate`s) has ended. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * A batcher whose batches the test answers: every batch sent is recorded in `sent`, with `answer(i, failed)`, which
 * answers the requests of batch `i` (each with its number times ten, or with a failure) and settles it.
 */
const scripted = (options: BatcherOptions) => {
  interface Request {
    readonly n: number
    readonly resolve: (value: number) => void
    readonly reject: (error: Error) => void
  }
  const sent: Array<{ readonly batch: ReadonlyArray<Request>; readonly settled: () => void }> = []
  const batcher = new Batcher<Request>((batch, settled) => sent.push({ batch, settled }), options)
  const ask = (n: number) => new Promise<number>((resolve, reject) => batcher.add({ n, resolve, reject }))
  const answer = (i: number, failed = false) => {
    const { batch, settled } = sent[i]!
    for (const r of batch) {
      if (failed) r.reject(new Error(`batch ${i}`))
      else r.resolve(r.n * 10)
    }
    settled()
  }
  const batches = () => sent.map((s) => s.batch.map((r) => r.n))
  return { batcher, ask, answer, batches }
}

const outcomes = (asked: ReadonlyArray<Promise<number>>) =>
  Promise.all(asked.map((p) => p.then(String, (error: Error) => error.message)))

describe("Batcher", () => {
  it("requests asked in one turn go in one batch, in order, at the end of the turn", async () => {
    const { batcher, ask, answer, batches } = scripted({ maxBatch: 10, maxInFlight: 1 })
    const asked = [ask(1), ask(2), ask(3)]
    assert.deepStrictEqual(batches(), [])
    await nextTurn()
    assert.deepStrictEqual(batches(), [[1, 2, 3]])
    answer(0)
    assert.deepStrictEqual(await outcomes(asked), ["10", "20", "30"])
    assert.strictEqual(batcher.batches, 1)
  })

  it("with one batch in flight, requests wait for it to settle, then go together at once", async () => {
    const { batcher, ask, answer, batches } = scripted({ maxBatch: 10, maxInFlight: 1 })
    const first = [ask(1)]
    await nextTurn()
    const waiting = [ask(2), ask(3)]
    await nextTurn()
    const later = [ask(4)]
    await nextTurn()
    assert.deepStrictEqual(batches(), [[1]])
    answer(0)
    // Sent as the first batch settles, without waiting for another turn.
    assert.deepStrictEqual(batches(), [[1], [2, 3, 4]])
    answer(1)
    assert.deepStrictEqual(await outcomes([...first, ...waiting, ...later]), ["10", "20", "30", "40"])
    assert.strictEqual(batcher.batches, 2)
  })

  it("a failed batch fails its own requests only, and the next batch is still sent", async () => {
    const { ask, answer, batches } = scripted({ maxBatch: 2, maxInFlight: 1 })
    const asked = [ask(1), ask(2), ask(3), ask(4), ask(5)]
    await nextTurn()
    assert.deepStrictEqual(batches(), [[1, 2]])
    answer(0)
    assert.deepStrictEqual(batches(), [
      [1, 2],
      [3, 4]
    ])
    answer(1, true)
    assert.deepStrictEqual(batches(), [[1, 2], [3, 4], [5]])
    answer(2)
    assert.deepStrictEqual(await outcomes(asked), ["10", "20", "batch 1", "batch 1", "50"])
  })

  it("with no bound on batches in flight, at most maxBatch a batch and every batch at the end of the turn", async () => {
    const { batcher, ask, answer, batches } = scripted({ maxBatch: 2, maxInFlight: Infinity })
    const asked = [ask(1), ask(2), ask(3), ask(4), ask(5)]
    await nextTurn()
    assert.deepStrictEqual(batches(), [[1, 2], [3, 4], [5]])
    // A request asked while batches are in flight goes at the end of its own turn.
    const later = [ask(6)]
    await nextTurn()
    assert.deepStrictEqual(batches(), [[1, 2], [3, 4], [5], [6]])
    answer(2)
    answer(1, true)
    answer(3)
    answer(0)
    assert.deepStrictEqual(await outcomes([...asked, ...later]), ["10", "20", "batch 1", "batch 1", "50", "60"])
    assert.strictEqual(batcher.batches, 4)
  })
})
