import {
  type AccountId,
  answerGuarded,
  isWidgetType,
  StorageError,
  type StorageFailure,
  type StreamId,
  type StreamName,
  type Widget
} from "@dashstream/core"
import { Either } from "effect"
import type pg from "pg"
import { Batcher } from "./batcher.js"
import { toStorageFailure } from "./errors.js"

/** A `streams` row as the widget lookups read it (ids and microsecond times as numbers, see `pool.ts`). */
export interface StreamRow {
  readonly id: number
  readonly account_id: string
  readonly name: string
  readonly type: string
  readonly created_at: number
}

/** A stored stream row as a core `Widget`; a type outside the 20 known ones is a corrupt row (`StorageError`). */
export const toWidget = (row: StreamRow): Either.Either<Widget, StorageError> =>
  isWidgetType(row.type)
    ? Either.right({
        id: row.id as StreamId,
        accountId: row.account_id as AccountId,
        streamName: row.name as StreamName,
        type: row.type,
        createdAt: row.created_at
      })
    : Either.left(new StorageError({ cause: new Error(`stream ${row.id} has unknown widget type ${row.type}`) }))

/**
 * Called once with the widgets found among the names asked (by stream name; a name the account has no widget of is
 * absent), or with the failure of the batch's query (then the map is empty and means nothing).
 */
export type WidgetsDone = (error: StorageFailure | undefined, found: ReadonlyMap<string, Widget>) => void

interface Pending {
  readonly account: AccountId
  readonly names: ReadonlyArray<string>
  readonly done: WidgetsDone
}

/**
 * The stream rows of the pairs (account `$1[n]`, name `$2[n]`), as `n` (1-based position in the arrays) and the
 * columns of {@link StreamRow}; no row for a pair that names no widget. One probe of the `(account_id, name)` unique
 * index per pair. Named, so each pooled connection prepares it once.
 */
const batchStatement = {
  name: "dashstream_lookup_widgets",
  text:
    "SELECT l.n::int, s.id, s.account_id, s.name, s.type, s.created_at " +
    "FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS l(account_id, name, n) " +
    "JOIN streams s ON s.account_id = l.account_id AND s.name = l.name",
  rowMode: "array"
} as const

type BatchRow = [number, number, string, string, string, number]

const noWidgets: ReadonlyMap<string, Widget> = new Map()

/**
 * The widget lookups of the push and read paths (`AccountStore.findWidgets` and `lookupWidget`), batched: the lookups
 * asked for while a query runs go together in the next one, so at most one such query is in flight and a burst of
 * lookups costs ONE query. A lookup asked for while none runs is sent at the end of the event loop's turn
 * (`setImmediate`), with the others asked in that turn. At most `maxBatch` lookups go in one query.
 *
 * Why: the account cache remembers a widget for a second (`CachedAccountStore.ts`), so pushes spread over more
 * streams than the server pushes per second miss it on nearly every push. Looked up one query each, such pushes cost
 * the server several times the CPU of pushes to 100 streams (a query sent and its answer parsed per push, a socket
 * write each; docs/internals.md, "PostgreSQL group commit").
 *
 * A lookup sees every widget committed before its batch's query starts, so every one created before the lookup was
 * asked for. A failed query answers every lookup of its batch with the failure (`StorageUnavailable` when the server
 * is unreachable, `StorageError` otherwise); a corrupt row (see {@link toWidget}) fails the lookups that asked for it.
 * Each lookup is answered through core's `answerGuarded`: a continuation that throws is answered again, alone. The
 * batching is a {@link Batcher} with one query in flight.
 */
export class WidgetLookups {
  private readonly batcher: Batcher<Pending>

  constructor(
    private readonly pool: pg.Pool,
    maxBatch: number = 256
  ) {
    this.batcher = new Batcher((batch, settled) => void this.send(batch).finally(settled), { maxBatch, maxInFlight: 1 })
  }

  /** Queries sent so far (lookups / batches is the mean batch). */
  get batches(): number {
    return this.batcher.batches
  }

  /** Looks up the widgets named `names` of account `account` and calls `done` once (see {@link WidgetsDone}). */
  find(account: AccountId, names: ReadonlyArray<string>, done: WidgetsDone): void {
    if (names.length === 0) return answerGuarded(done, undefined, noWidgets, noWidgets)
    this.batcher.add({ account, names, done })
  }

  private async send(batch: ReadonlyArray<Pending>): Promise<void> {
    const accounts: Array<string> = []
    const names: Array<string> = []
    // The lookup (index in `batch`) each pair of the arrays belongs to.
    const owners: Array<number> = []
    for (let i = 0; i < batch.length; i++) {
      const p = batch[i]!
      for (const name of p.names) {
        accounts.push(p.account)
        names.push(name)
        owners.push(i)
      }
    }
    let rows: Array<BatchRow>
    try {
      rows = (await this.pool.query<BatchRow>({ ...batchStatement, values: [accounts, names] })).rows
    } catch (cause) {
      const error = toStorageFailure(cause)
      for (const p of batch) answerGuarded(p.done, error, noWidgets, noWidgets)
      return
    }
    const found: Array<Map<string, Widget> | undefined> = new Array(batch.length)
    const failed: Array<StorageError | undefined> = new Array(batch.length)
    for (const row of rows) {
      const owner = owners[row[0] - 1]!
      const widget = toWidget({ id: row[1], account_id: row[2], name: row[3], type: row[4], created_at: row[5] })
      if (Either.isLeft(widget)) failed[owner] ??= widget.left
      else (found[owner] ??= new Map()).set(row[3], widget.right)
    }
    for (let i = 0; i < batch.length; i++) {
      const error = failed[i]
      answerGuarded(batch[i]!.done, error, error === undefined ? (found[i] ?? noWidgets) : noWidgets, noWidgets)
    }
  }
}
