import {
  AccountStore,
  type ChangeFeed,
  type DecimationStore,
  digestAccessKey,
  micros,
  newAccessKey,
  newAccountId,
  type PointOp,
  type StreamChange,
  StreamName,
  StreamStore,
  type Widget,
  type WidgetType
} from "@dashstream/core"
import type pg from "pg"
import { Context, Effect, Either, Fiber, Layer, type Scope } from "effect"
import { type InvalidPostgresUrl, layer, migrate, parseUrl } from "../src/index.js"
import { GroupCommit } from "../src/internal/groupCommit.js"
import { makePool } from "../src/internal/pool.js"
import { withSchema } from "../src/testing/index.js"

/** A receive time in microseconds (2023-11-14T22:13:20Z). */
export const T0 = 1_700_000_000_000_000

export type Stores = Context.Context<AccountStore | StreamStore | DecimationStore | ChangeFeed>

/** A fresh schema name, unique per call. */
export const freshSchema = (prefix: string) => `${prefix}_${Math.random().toString(36).slice(2, 10)}`

/**
 * Builds `count` independent layers on `schema` of the database at `url` (extra URL parameters in `params`), each
 * after migrating and with its own pool, as separate server processes would.
 */
export const processes = (
  url: string,
  schema: string,
  count: number,
  params: Record<string, string> = {}
): Effect.Effect<ReadonlyArray<Stores>, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const u = new URL(withSchema(url, schema))
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v)
    const config = yield* parseUrl(u.toString())
    // Each "process" migrates at startup, as `serve` does.
    const built: Array<Stores> = []
    for (let i = 0; i < count; i++) {
      yield* migrate(config)
      built.push(yield* Layer.build(layer(config)))
    }
    return built
  })

/** One layer on a migrated schema. */
export const stores = (url: string): Effect.Effect<Stores, InvalidPostgresUrl | unknown, Scope.Scope> =>
  Effect.map(processes(url, freshSchema("s"), 1), (all) => all[0]!)

/** Creates an account with one widget per `(type, name)`. */
export const widgets = (on: Stores, specs: ReadonlyArray<readonly [WidgetType, string]>) =>
  Effect.gen(function* () {
    const store = Context.get(on, AccountStore)
    const id = newAccountId()
    yield* store.createAccount({ id, name: "test", createdAt: T0 }, digestAccessKey(newAccessKey()))
    const created: Array<Widget> = []
    for (const [type, name] of specs) created.push(yield* store.createWidget(id, StreamName.make(name), type, T0))
    return created
  })

/** Writes `ops` (one per widget) in one `write` call through `on`, received at `T0 + offset`. */
export const write = (on: Stores, ops: ReadonlyArray<readonly [Widget, PointOp]>, offset = 0) =>
  Context.get(on, StreamStore).write(
    ops.map(([widget, op], i) => ({ widget, op, path: ops.length === 1 ? "point" : `streams[${i}].point` })),
    micros(T0 + offset)
  )

/** Every entry of a stream, parsed. */
export const readAll = (on: Stores, widget: Widget) =>
  Effect.map(Context.get(on, StreamStore).read(widget.id, { since: micros(0), limit: null }), (entries) =>
    entries.map((e) => ({ ts: e.ts as number, point: JSON.parse(e.json) as { number: number } }))
  )

/** The numbers of a stream's entries, in order. */
export const readNumbers = (on: Stores, widget: Widget) =>
  Effect.map(readAll(on, widget), (entries) => entries.map((e) => e.point.number))

/**
 * The changes flattened, one line per entry (`entry <ts> fresh|old <json>`) or per other change, to compare
 * independently of how the entries were grouped.
 */
export const flat = (changes: ReadonlyArray<StreamChange>): Array<string> =>
  changes.flatMap((c) =>
    c._tag === "Stored"
      ? c.entries.map((e) => `entry ${e.ts} ${e.fresh ? "fresh" : "old"} ${e.json}`)
      : c._tag === "Cleared"
        ? [`clear ${c.at}`]
        : [c._tag]
  )

/** Waits (up to 10 s, polling every 10 ms) until `done` holds; fails naming `what` otherwise. */
export const until = (what: string, done: () => boolean) =>
  Effect.promise(async () => {
    const deadline = Date.now() + 10_000
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })

export const delta = (d: number): PointOp => ({ _tag: "Delta", delta: d })
export const put = (n: number): PointOp => ({ _tag: "Put", entries: [{ point: { number: n } }] })

/**
 * A pool of its own on `schema` of the database at `url` whose clients count the queries they send (`sent.queries`),
 * ended when the scope closes.
 */
export const countingPool = (url: string, schema: string) =>
  Effect.gen(function* () {
    const config = yield* parseUrl(withSchema(url, schema))
    // `failed`: the SQLSTATE and message of every query the server refused, in order.
    const sent = { queries: 0, failed: [] as Array<{ readonly code: string; readonly message: string }> }
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const pool = makePool(config)
        pool.on("connect", (client) => {
          const query = client.query.bind(client) as (...args: ReadonlyArray<unknown>) => unknown
          ;(client as unknown as { query: typeof query }).query = (...args) => {
            sent.queries++
            const result = query(...args)
            if (result instanceof Promise) {
              result.catch((error: { code?: string; message?: string }) => {
                if (typeof error.code === "string") sent.failed.push({ code: error.code, message: error.message ?? "" })
              })
            }
            return result
          }
        })
        return pool
      }),
      (pool) => Effect.promise(() => pool.end().catch(() => undefined))
    )
    return { pool, sent }
  })

/**
 * `pool` with its queries held back: each query for which `holds` is true (all, by default) waits until `open` is
 * called; the others pass at once. `counts.held` counts the queries held so far.
 */
export const gatedPool = (
  pool: pg.Pool,
  holds: (query: { readonly values: ReadonlyArray<unknown> }) => boolean = () => true
) => {
  let release: () => void = () => {}
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  const counts = { held: 0 }
  const gated = {
    query: async (query: { readonly values: ReadonlyArray<unknown> }) => {
      if (holds(query)) {
        counts.held++
        await gate
      }
      return pool.query(query as never)
    }
  } as unknown as pg.Pool
  return { pool: gated, open: () => release(), counts }
}

/** A pool of its own on `schema` of the database at `url`, ended when the scope closes. */
export const ownPool = (url: string, schema: string) =>
  Effect.gen(function* () {
    const config = yield* parseUrl(withSchema(url, schema))
    return yield* Effect.acquireRelease(
      Effect.sync(() => makePool(config)),
      (pool) => Effect.promise(() => pool.end())
    )
  })

/** A group commit running one group at a time on `pool` (calls wait at most `maxWaitMs`), closed with the scope. */
export const oneGroupAtATime = (pool: pg.Pool, maxWaitMs = 5_000) =>
  Effect.acquireRelease(
    Effect.sync(() => new GroupCommit(pool, { maxCalls: 1000, maxEntries: 20_000, maxInFlight: 1, maxWaitMs })),
    (g) => Effect.promise(() => g.close())
  )

/** A group commit (see {@link oneGroupAtATime}) on its own pool over `schema`, plus the stores of a "process" for widgets and reads. */
export const groupCommitSetup = (url: string, schema: string, maxWaitMs = 5_000) =>
  Effect.gen(function* () {
    const [stores] = yield* processes(url, schema, 1)
    const group = yield* oneGroupAtATime(yield* ownPool(url, schema), maxWaitMs)
    return { stores: stores!, group }
  })

/** A group commit (see {@link oneGroupAtATime}) on a pool of its own over `schema` that counts the queries it sends. */
export const countedGroupCommit = (url: string, schema: string) =>
  Effect.gen(function* () {
    const { pool, sent } = yield* countingPool(url, schema)
    return { group: yield* oneGroupAtATime(pool), sent }
  })

/** Starts every call in the same tick, so they all join one group; resolves to each call's outcome tag. */
export const together = (group: GroupCommit, calls: ReadonlyArray<ReadonlyArray<readonly [Widget, PointOp]>>) =>
  Effect.gen(function* () {
    const fibers = calls.map((ops, c) =>
      Effect.runFork(
        Effect.either(
          group.write(
            ops.map(([widget, op], i) => ({ widget, op, path: `streams[${i}].point` })),
            micros(T0 + c)
          )
        )
      )
    )
    const results = yield* Fiber.joinAll(fibers)
    return results.map((r) => (Either.isRight(r) ? "Success" : r.left._tag))
  })
