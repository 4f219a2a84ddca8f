import { assert, layer } from "@effect/vitest"
import { Effect, FastCheck as fc, type Layer, Stream } from "effect"
import { AccountStore } from "../../AccountStore.js"
import { renderEntries, StreamStore } from "../../StreamStore.js"
import { micros, sinceFromText } from "../../Time.js"
import * as UseCases from "../../UseCases.js"
import {
  applyModel,
  Model,
  modelOpArb,
  newAccount,
  newWidget,
  read,
  type Stores,
  toPointOp,
  write
} from "./fixtures.js"

/**
 * The property part of the storage contract suite: random pushes read back as a plain model of a stream (docs/api.md
 * sections 3 and 6), and the paged read of `UseCases.readPages` against one read, on one store shared by the runs.
 * Registered by `storageSuite` inside its `describe`.
 */
export const modelSuite = (makeLayer: () => Layer.Layer<Stores, unknown>): void => {
  layer(makeLayer())("model", (it) => {
    it.effect.prop(
      "random sequences of pushes read back as a simple model",
      [
        fc.array(modelOpArb, { maxLength: 25 }),
        fc.integer({ min: 0, max: 45 }),
        fc.option(fc.integer({ min: 1, max: 5 }), { nil: null })
      ],
      ([ops, since, limit]) =>
        Effect.gen(function* () {
          const w = yield* newWidget("sparkline")
          const model = new Model()
          for (const op of ops) {
            yield* write(w, toPointOp(op), micros(op.now))
            applyModel(model, op)
          }
          const all = model.sorted()
          assert.deepStrictEqual(yield* read(w.id, { since: micros(0), limit: null }), all)
          assert.deepStrictEqual(yield* read(w.id, { since: null, limit: null }), all.slice(-1))
          const after = all.filter((e) => e.ts > since)
          assert.deepStrictEqual(
            yield* read(w.id, { since: micros(since), limit }),
            limit === null ? after : after.slice(0, limit)
          )
        }),
      { fastCheck: { numRuns: 60 } }
    )

    it.effect.prop(
      "UseCases.read delivers what one read of the store does, and a paged read (UseCases.readPages) the same in pages of at most the page size",
      [
        fc.array(modelOpArb, { maxLength: 25 }),
        fc.integer({ min: 1, max: 4 }),
        fc.option(fc.integer({ min: 0, max: 45 }), { nil: undefined }),
        fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined })
      ],
      ([ops, pageSize, sinceMicros, limit]) =>
        Effect.gen(function* () {
          const { account, accessKey } = yield* newAccount()
          const w = yield* newWidget("sparkline", "paged", account.id)
          for (const op of ops) yield* write(w, toPointOp(op), micros(op.now))
          const params = {
            since: sinceMicros === undefined ? undefined : String(sinceMicros / 1_000_000),
            limit: limit === undefined ? undefined : String(limit)
          }
          // One read of the store with the same query: `since` as the read parses it, `limit` as given.
          const store = yield* StreamStore
          const whole = yield* store.read(w.id, {
            since: params.since === undefined ? null : sinceFromText(params.since)!,
            limit: limit ?? null
          })
          // The embedding API's whole read (UseCases.read) is that same read.
          assert.deepStrictEqual(yield* UseCases.read(accessKey, "paged", params), whole)
          const { first, rest } = yield* UseCases.readPages(accessKey, "paged", params, pageSize)
          if (params.since === undefined && limit === undefined) {
            // The latest-entry read without an effect answers the same first page, when it answers (not on a store
            // without synchronous lookups, PostgreSQL, unless behind the account cache).
            const accounts = yield* AccountStore
            const direct = yield* Effect.async<string | undefined>((resume) => {
              const taken = UseCases.readLatestDirect(accessKey, "paged", accounts, store, (error, page) =>
                resume(Effect.succeed(error === undefined ? page!.text : `failed: ${error._tag}`))
              )
              if (!taken) resume(Effect.succeed(undefined))
            })
            if (direct !== undefined) assert.strictEqual(direct, first.text)
          }
          const pages = [first, ...(rest === undefined ? [] : yield* Stream.runCollect(rest))]
          for (const page of pages.slice(1)) assert.isAbove(page.count, 0)
          for (const page of pages) assert.isAtMost(page.count, params.since === undefined ? 1 : pageSize)
          assert.strictEqual(
            pages
              .map((page) => page.text)
              .filter((text) => text !== "")
              .join(","),
            renderEntries(whole)
          )
          assert.strictEqual(
            pages.reduce((n, page) => n + page.count, 0),
            whole.length
          )
        }),
      { fastCheck: { numRuns: 60 } }
    )
  })
}
