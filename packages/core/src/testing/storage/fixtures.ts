import { Effect, FastCheck as fc, Option } from "effect"
import { type Account, type AccountId, newAccessKey, newAccountId } from "../../Account.js"
import { AccountStore } from "../../AccountStore.js"
import type { PointOp, StoredPoint } from "../../Point.js"
import { StreamName } from "../../StreamName.js"
import { type ReadQuery, StreamStore, type StreamWrite } from "../../StreamStore.js"
import { type Micros, micros } from "../../Time.js"
import type { StreamId, Widget } from "../../Widget.js"
import type { WidgetType } from "../../WidgetType.js"
import { knownKey } from "./directForms.js"

/** Helpers of the storage contract suites (see `../StorageSuite.ts`): fixtures, shorthands and a model of a stream. */

/** Registers one test of a storage contract suite, run against a fresh store (see `storageSuite`). */
export type SuiteTest = (title: string, body: Effect.Effect<unknown, unknown, Stores>, timeout?: number) => void

export type Stores = AccountStore | StreamStore

/** A receive time well inside the valid range (2023-11-14T22:13:20Z), in microseconds. */
export const T0 = 1_700_000_000_000_000

export const at = (offset: number): Micros => micros(T0 + offset)

export interface Read {
  readonly ts: number
  readonly point: unknown
}

export const newAccount = (name = "test") =>
  Effect.gen(function* () {
    const store = yield* AccountStore
    const accessKey = newAccessKey()
    const account: Account = { id: newAccountId(), name, createdAt: T0 }
    yield* store.createAccount(account, knownKey(accessKey))
    return { account, accessKey }
  })

export const newWidget = (type: WidgetType, name = "stream", accountId?: AccountId) =>
  Effect.gen(function* () {
    const id = accountId ?? (yield* newAccount()).account.id
    return yield* Effect.flatMap(AccountStore, (s) => s.createWidget(id, StreamName.make(name), type, T0))
  })

export const writeAll = (writes: ReadonlyArray<StreamWrite>, now: Micros) =>
  Effect.flatMap(StreamStore, (s) => s.write(writes, now))

export const write = (widget: Widget, op: PointOp, now: Micros = at(0)) =>
  writeAll([{ widget, op, path: "point" }], now)

export const read = (stream: StreamId, query: ReadQuery) =>
  Effect.map(
    Effect.flatMap(StreamStore, (s) => s.read(stream, query)),
    (entries): ReadonlyArray<Read> => entries.map((e) => ({ ts: e.ts, point: JSON.parse(e.json) as unknown }))
  )

export const readAll = (widget: Widget) => read(widget.id, { since: micros(0), limit: null })
export const readLatest = (widget: Widget) => read(widget.id, { since: null, limit: null })

export const put = (...points: ReadonlyArray<StoredPoint>): PointOp => ({
  _tag: "Put",
  entries: points.map((point) => ({ point }))
})
export const putAt = (...entries: ReadonlyArray<readonly [Micros, StoredPoint]>): PointOp => ({
  _tag: "Put",
  entries: entries.map(([ts, point]) => ({ point, ts }))
})
export const delta = (d: number, extra: { prefix?: string; suffix?: string; ts?: Micros } = {}): PointOp => ({
  _tag: "Delta",
  delta: d,
  ...extra
})
export const clear: PointOp = { _tag: "Clear" }

// Options are compared through getOrNull: chai's deep equality sees Option.some(x) and Option.none() as equal.
export const findAccount = (accessKey: string) =>
  Effect.map(
    Effect.flatMap(AccountStore, (s) => s.findAccountByKey(knownKey(accessKey))),
    Option.getOrNull
  )

/**
 * A plain model of one numeric stream (docs/api.md section 3): entries by `ts`, the highest `ts` ever assigned,
 * server `ts` = `now` or one past the highest, delta on the latest entry, clear keeps the highest `ts`.
 */
export class Model {
  lastTs: number | null = null
  readonly entries = new Map<number, number>()
  add(n: number, clientTs: number | undefined, now: number) {
    const ts = clientTs ?? (this.lastTs !== null && this.lastTs >= now ? this.lastTs + 1 : now)
    if (this.lastTs === null || ts > this.lastTs) this.lastTs = ts
    this.entries.set(ts, n)
  }
  sorted(): Array<Read> {
    return [...this.entries.keys()].sort((a, b) => a - b).map((ts) => ({ ts, point: { number: this.entries.get(ts) } }))
  }
  latest(): number {
    const all = this.sorted()
    return all.length === 0 ? 0 : (all[all.length - 1]!.point as { number: number }).number
  }
}

type ModelOp =
  | {
      readonly kind: "put"
      readonly numbers: ReadonlyArray<number>
      readonly ts: number | undefined
      readonly now: number
    }
  | { readonly kind: "delta"; readonly delta: number; readonly now: number }
  | { readonly kind: "clear"; readonly now: number }

// Small time ranges so that client timestamps collide with server ones and `now` often stalls or goes back.
const nowArb = fc.integer({ min: 1, max: 40 })
export const modelOpArb: fc.Arbitrary<ModelOp> = fc.oneof(
  fc.record({
    kind: fc.constant("put" as const),
    numbers: fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 1, maxLength: 3 }),
    ts: fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
    now: nowArb
  }),
  fc.record({ kind: fc.constant("delta" as const), delta: fc.integer({ min: -50, max: 50 }), now: nowArb }),
  fc.record({ kind: fc.constant("clear" as const), now: nowArb })
)

export const toPointOp = (op: ModelOp): PointOp => {
  switch (op.kind) {
    case "put":
      // Client timestamps inside one array push are strictly increasing (the decoder enforces it).
      return {
        _tag: "Put",
        entries: op.numbers.map((n, i) =>
          op.ts === undefined ? { point: { number: n } } : { point: { number: n }, ts: micros(op.ts + i) }
        )
      }
    case "delta":
      return delta(op.delta)
    case "clear":
      return clear
  }
}

export const applyModel = (model: Model, op: ModelOp) => {
  switch (op.kind) {
    case "put":
      op.numbers.forEach((n, i) => model.add(n, op.ts === undefined ? undefined : op.ts + i, op.now))
      return
    case "delta":
      model.add(model.latest() + op.delta, undefined, op.now)
      return
    case "clear":
      // A clear takes a server ts of its own (docs/api.md section 10: the clear event's id), like a server-assigned entry.
      model.entries.clear()
      model.lastTs = model.lastTs !== null && model.lastTs >= op.now ? model.lastTs + 1 : op.now
      return
  }
}
