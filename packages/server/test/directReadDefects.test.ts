/**
 * A throw on a direct read path (the read lane's latest-entry read: PostgreSQL's `lookupWidget`, its batched latest
 * reads; SQLite's synchronous read) is answered 500 `internal`, logged once with its cause, and the server goes on
 * serving, on both backends. Real parts: the HTTP layer on loopback over each adapter (as `serve` composes them, with
 * the account cache), a real SQLite file and a real PostgreSQL schema; the throw is injected into the entries (or the
 * widget) the adapter hands to core's rendering.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  AccountStore,
  digestAccessKey,
  StreamStore,
  micros,
  newAccessKey,
  newAccountId,
  StreamName,
  type Widget
} from "@dashstream/core"
import * as Postgres from "@dashstream/storage-postgres"
import { openTestDatabase, withSchema } from "@dashstream/storage-postgres/testing"
import * as Sqlite from "@dashstream/storage-sqlite"
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import { afterAll, assert, describe, it } from "vitest"
import { type HttpStores, serveHttp } from "./support/loopbackHttp.js"

// Never skipped: without a PostgreSQL server, opening the database throws and this file fails.
const db = await openTestDatabase()
const dir = mkdtempSync(join(tmpdir(), "dashstream-direct-"))
afterAll(async () => {
  await db.close()
  rmSync(dir, { recursive: true, force: true })
})

/** What the injected throw poisons: nothing, the entries a read hands back, or the widget a lookup finds. */
type Poison = "none" | "entries" | "widget"

const injected = "injected into the direct path"

/** A value whose every field read throws (core's rendering and lookup read them). */
const throwing = <A extends object>(): A =>
  new Proxy({} as A, {
    get: () => {
      throw new Error(injected)
    }
  })

/** `stores` with the entries of `readDirect` and the widget of `lookupWidget` poisoned while `poison.now` says so. */
const poisoned = (stores: Context.Context<HttpStores>, poison: { now: Poison }): Context.Context<HttpStores> => {
  const streams = Context.get(stores, StreamStore)
  const accounts = Context.get(stores, AccountStore)
  const lookup = accounts.lookupWidget
  return Context.add(
    Context.add(stores, StreamStore, {
      ...streams,
      readDirect: (stream, query, done) =>
        streams.readDirect(stream, query, (error, entries) =>
          done(error, poison.now === "entries" && entries.length > 0 ? [throwing()] : entries)
        )
    }),
    AccountStore,
    {
      ...accounts,
      lookupWidget:
        lookup === undefined
          ? undefined
          : (id, name, done) =>
              lookup(id, name, (error, widget) => done(error, poison.now === "widget" ? throwing<Widget>() : widget))
    }
  )
}

/** Serves the HTTP layer over `storage` (poisoned as `poison` says) on a loopback port, logs captured. */
const serve = (storage: Layer.Layer<HttpStores, unknown>, poison: { now: Poison }) =>
  Effect.gen(function* () {
    const stores = yield* Layer.build(storage)
    const { url, logs } = yield* serveHttp(Layer.succeedContext(poisoned(stores, poison)))
    const accounts = Context.get(stores, AccountStore)
    const id = newAccountId()
    const key = newAccessKey()
    yield* accounts.createAccount({ id, name: "test", createdAt: 0 }, digestAccessKey(key))
    // `n` is read first (its widget then cached); `m`'s first read looks its widget up (`lookupWidget`, PostgreSQL).
    for (const name of ["n", "m"]) {
      const widget = yield* accounts.createWidget(id, Schema.decodeSync(StreamName)(name), "number", 0)
      yield* Context.get(stores, StreamStore).write(
        [{ widget, op: { _tag: "Put", entries: [{ point: { number: 7 } }] }, path: "point" }],
        micros(1_700_000_000_000_000)
      )
    }
    return { url: (name: string) => `${url}/api/v2/${key}/datastream/${name}`, key, logs }
  })

/** GETs `url`; status and body. */
const get = (url: string) =>
  Effect.promise(async () => {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) })
    return { status: res.status, body: await res.text() }
  })

const run = <A, E>(body: Effect.Effect<A, E, Scope.Scope>) =>
  Effect.runPromise(Effect.scoped(body).pipe(Effect.catchAllCause((cause) => Effect.die(cause)))) as Promise<A>

const backends: ReadonlyArray<readonly [string, () => Layer.Layer<HttpStores, unknown>, ReadonlyArray<Poison>]> = [
  ["sqlite", () => Sqlite.layer({ filename: join(dir, `${Math.random().toString(36).slice(2)}.db`) }), ["entries"]],
  [
    "postgres",
    () =>
      Layer.unwrapEffect(
        Effect.gen(function* () {
          const config = yield* Postgres.parseUrl(
            withSchema(db.url, `direct_${Math.random().toString(36).slice(2, 10)}`)
          )
          yield* Postgres.migrate(config)
          return Postgres.layer(config)
        })
      ),
    ["entries", "widget"]
  ]
]

describe("a throw on a direct read path", () => {
  for (const [backend, storage, poisons] of backends) {
    it(
      `[${backend}] is answered 500, logged once with its cause, and the server goes on serving`,
      () =>
        run(
          Effect.gen(function* () {
            const poison: { now: Poison } = { now: "none" }
            const { url, key, logs } = yield* serve(storage(), poison)
            const unhandled: Array<unknown> = []
            const onUnhandled = (reason: unknown) => void unhandled.push(reason)
            process.on("unhandledRejection", onUnhandled)
            yield* Effect.addFinalizer(() => Effect.sync(() => process.off("unhandledRejection", onUnhandled)))
            const fine = yield* get(url("n"))
            assert.deepStrictEqual(fine.status, 200)
            for (const now of poisons) {
              // The account is cached by the read of `n` just before: `m`'s widget, never read, is looked up.
              const stream = now === "widget" ? "m" : "n"
              poison.now = now
              const before = logs.length
              const failed = yield* get(url(stream))
              poison.now = "none"
              assert.deepStrictEqual(
                [failed.status, JSON.parse(failed.body)],
                [500, { error: { code: "internal", message: "internal server error" } }],
                now
              )
              yield* Effect.sleep("20 millis")
              const logged = logs.slice(before).filter((line) => line.includes(injected))
              assert.strictEqual(logged.length, 1, `${now}: ${logs.slice(before).join("\n")}`)
              assert.match(logged[0]!, /^internal error answering GET \/api\/v2\/\S+\/datastream\//)
              assert.match(logged[0]!, new RegExp(`/datastream/${stream}\n`))
              assert.notInclude(logged[0]!, key)
              assert.deepStrictEqual(yield* get(url(stream)), fine, now)
            }
            assert.deepStrictEqual(unhandled, [])
          })
        ),
      30_000
    )
  }
})
