import {
  type EntryWrite,
  type GroupSize,
  type InvalidPoint,
  type LatestEntry,
  type Micros,
  needsLatest,
  PendingWrite as Pending,
  pointsOf,
  queuedWrite,
  queuedWriteDirect,
  type StorageFailure,
  StorageUnavailable,
  type StoredPoint,
  type StreamNotFound,
  type StreamWrite,
  takeGroup,
  type WriteDone,
  type WriteError,
  type WriteObserver,
  WritePlan
} from "@dashstream/core"
import { Effect } from "effect"
import type pg from "pg"
import { toStorageFailure } from "./errors.js"
import { channelName, maxListed, storedPayload } from "./notify.js"

export type { WriteError } from "@dashstream/core"

/**
 * How large one group may grow, how many groups may run at once and how long a call may wait for a group.
 * `maxCalls` counts `write` calls; `maxEntries` counts the writes of those calls, a `Put` counting one per entry (a
 * single call larger than `maxEntries` still forms a group of its own). `maxInFlight` groups run at the same time,
 * each on its own pooled connection. A call still queued after `maxWaitMs` milliseconds (all groups busy, e.g.
 * stuck on a lock or on a server that stopped answering) fails with `StorageUnavailable` and is withdrawn, as a
 * call waiting for a pooled connection would (the store passes the pool's `connect_timeout_ms`).
 */
export interface GroupLimits extends GroupSize {
  readonly maxInFlight: number
  readonly maxWaitMs: number
}

/** The default {@link GroupLimits}: 1,000 calls or 20,000 entries a group, 2 groups at once, 5 s of waiting. */
export const defaultGroupLimits: GroupLimits = { maxCalls: 1000, maxEntries: 20_000, maxInFlight: 2, maxWaitMs: 5_000 }

const closed = new StorageUnavailable({ cause: new Error("the PostgreSQL stream store is closed") })

/** The net change the group's transaction makes to a stream (see {@link netChanges}). */
interface StreamChange {
  /** `last_ts` before the group (microseconds). */
  readonly startTs: Micros | null
  /** `last_ts` after the group. */
  readonly lastTs: Micros | null
  /** The `ts` of the last clear of the group (microseconds), null when it did not clear the stream. */
  readonly clearedAt: Micros | null
  /** Entries to upsert, by `ts`: a later write replaces an earlier one with the same `ts`. */
  readonly entries: Map<number, EntryWrite>
}

// A group costs one round trip when it is planned on guessed `last_ts` (one prepared statement, see `guessedSql`) or
// two: simple queries of several statements each, `BEGIN`, the row locks and the latest points in one, the changes
// and `COMMIT` in the other. A simple query takes no parameters: the stream ids and times are integers, inlined as
// such; texts (points, notification payloads) are inlined as escaped literals (see `textArray`).

/** The latest entry of each stream in `ids` (inlined integers), as `stream_id, ts, point`. */
const latestSql = (ids: ReadonlyArray<number>): string =>
  `SELECT s.id AS stream_id, e.ts, e.point FROM unnest('{${ids.join(",")}}'::bigint[]) AS s(id) ` +
  "CROSS JOIN LATERAL (SELECT ts, point FROM entries WHERE stream_id = s.id ORDER BY ts DESC LIMIT 1) e"

/** A SQL string literal of `text`: quotes doubled; with a backslash, the `E''` form with backslashes doubled. */
const sqlLiteral = (text: string): string =>
  text.includes("\\") ? ` E'${text.replaceAll("\\", "\\\\").replaceAll("'", "''")}'` : `'${text.replaceAll("'", "''")}'`

/** A `text[]` literal of `texts`: each element double-quoted with backslashes and `"` escaped, the whole a SQL literal. */
const textArray = (texts: ReadonlyArray<string>): string => {
  let body = ""
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i]!
    const quoted = t.includes("\\") || t.includes('"') ? t.replace(/[\\"]/g, "\\$&") : t
    body += i === 0 ? `"${quoted}"` : `,"${quoted}"`
  }
  return `${sqlLiteral(`{${body}}`)}::text[]`
}

/** A `bigint[]` or `float8[]` literal of numbers (finite; `null` as `NULL`). */
const numberArray = (numbers: ReadonlyArray<number | null>, type: "bigint" | "float8"): string => {
  let body = ""
  for (let i = 0; i < numbers.length; i++) {
    const n = numbers[i]
    body += (i === 0 ? "" : ",") + (n === null || n === undefined ? "NULL" : String(n))
  }
  return `'{${body}}'::${type}[]`
}

/**
 * The net change of the group's planned writes per stream, for one statement to store: a clear drops the entries
 * planned before it, and an entry replaces an earlier one with the same `ts` (an upsert cannot touch a row twice).
 */
const netChanges = (plan: WritePlan): Map<number, StreamChange> => {
  const changes = new Map<number, StreamChange>()
  for (const s of plan.streams()) {
    changes.set(s.stream, { startTs: s.before, lastTs: s.lastTs, clearedAt: s.clearedAt, entries: new Map() })
  }
  for (let i = 0; i < plan.size; i++) {
    const entries = changes.get(plan.streamAt(i))!.entries
    const m = plan.mutation(i)
    if (m.clear) entries.clear()
    for (const entry of m.entries) entries.set(entry.ts, entry)
  }
  return changes
}

/** The net changes of a group as the arrays its statements take (see {@link storeArrays}). */
interface StoreArrays {
  /** Streams the group cleared. */
  readonly cleared: Array<number>
  /** The entries to upsert: stream id, `ts` (microseconds), decimation value, point JSON. */
  readonly streamIds: Array<number>
  readonly tss: Array<number>
  readonly values: Array<number | null>
  readonly points: Array<string>
  /** The streams whose `last_ts` or `cleared_ts` moved, with the new values. */
  readonly moved: Array<number>
  readonly lastTss: Array<number | null>
  readonly clearedTss: Array<number | null>
  /** One notification payload per changed stream (see `notify.ts`). */
  readonly payloads: Array<string>
}

/** The arrays of the net changes. */
const storeArrays = (changes: ReadonlyMap<number, StreamChange>): StoreArrays => {
  const out: StoreArrays = {
    cleared: [],
    streamIds: [],
    tss: [],
    values: [],
    points: [],
    moved: [],
    lastTss: [],
    clearedTss: [],
    payloads: []
  }
  for (const [id, change] of changes) {
    if (change.clearedAt !== null) out.cleared.push(id)
    let from: number | null = null
    let to: number | null = null
    // The entries that are not new (at or below the floor, see `notify.ts`), listed while there are few.
    const floor = change.clearedAt ?? change.startTs
    let old: Array<number> | undefined = []
    for (const entry of change.entries.values()) {
      out.streamIds.push(id)
      out.tss.push(entry.ts)
      out.values.push(entry.value)
      out.points.push(entry.json)
      if (from === null || entry.ts < from) from = entry.ts
      if (to === null || entry.ts > to) to = entry.ts
      if (floor !== null && entry.ts <= floor && old !== undefined) {
        if (old.length < maxListed) old.push(entry.ts)
        else old = undefined
      }
    }
    if ((change.lastTs !== change.startTs && change.lastTs !== null) || change.clearedAt !== null) {
      out.moved.push(id)
      out.lastTss.push(change.lastTs)
      out.clearedTss.push(change.clearedAt)
    }
    if (from !== null || change.clearedAt !== null) {
      out.payloads.push(
        storedPayload(
          id,
          change.startTs,
          from,
          to,
          change.clearedAt,
          old?.sort((a, b) => a - b)
        )
      )
    }
  }
  return out
}

/**
 * The SQL that stores the net changes: deletes of cleared streams, then one statement upserting every entry, setting
 * the new `last_ts` and `cleared_ts`, and notifying `channel` once per changed stream (see `notify.ts`; PostgreSQL
 * delivers the notifications on COMMIT only). An empty string when there is nothing to store.
 */
const storeSql = (a: StoreArrays, channel: string): string => {
  let sql = ""
  if (a.cleared.length > 0) sql += `DELETE FROM entries WHERE stream_id = ANY(${numberArray(a.cleared, "bigint")});\n`
  if (a.streamIds.length === 0 && a.moved.length === 0) return sql
  // One statement whatever the number of entries: the entries as four arrays. The data-modifying CTEs always run
  // to completion; the final SELECT sends the notifications.
  return (
    sql +
    `WITH upserted AS (
      INSERT INTO entries (stream_id, ts, value, point)
      SELECT * FROM unnest(${numberArray(a.streamIds, "bigint")}, ${numberArray(a.tss, "bigint")}, ${numberArray(a.values, "float8")}, ${textArray(a.points)})
      ON CONFLICT (stream_id, ts) DO UPDATE SET value = excluded.value, point = excluded.point
    ), moved AS (
      UPDATE streams SET last_ts = v.last_ts, cleared_ts = coalesce(v.cleared_ts, streams.cleared_ts)
      FROM unnest(${numberArray(a.moved, "bigint")}, ${numberArray(a.lastTss, "bigint")}, ${numberArray(a.clearedTss, "bigint")}) AS v(id, last_ts, cleared_ts)
      WHERE streams.id = v.id
    )
    SELECT pg_notify(${sqlLiteral(channel)}, p) FROM unnest(${textArray(a.payloads)}) AS p;\n`
  )
}

/**
 * The one statement of a group planned on guessed `last_ts` (see {@link runTransaction}), prepared once per
 * connection: `$1` the group's stream ids (ascending) and `$2` their guessed `last_ts`; the entries as `$3`-`$6`;
 * the moved streams and their new `last_ts` as `$7`, `$8`; the channel and the payloads as `$9`, `$10`.
 *
 * `locked` takes the row locks in ascending id (as the two-round-trip path does, so that no two groups deadlock).
 * `guard` divides by zero (SQLSTATE 22012, see {@link isStaleGuess}) unless every row exists with its guessed
 * `last_ts`; in READ COMMITTED a locked row is read as last committed, so a group that held the lock before this
 * one is seen. The final SELECT always reads `guard`, so it is always evaluated, and the statement is its own
 * transaction: an error anywhere leaves nothing stored. The upsert and the update wait for the guard too (`WHERE
 * guard = 1`). No clear: a statement cannot both delete a stream's entries and upsert the same rows.
 */
const guessedSql = `WITH locked AS (
  SELECT id, last_ts FROM streams WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE
), guard AS (
  SELECT 1 / ((SELECT count(*) FROM locked JOIN unnest($1::bigint[], $2::bigint[]) AS v(id, last_ts)
    ON locked.id = v.id AND locked.last_ts IS NOT DISTINCT FROM v.last_ts) = cardinality($1::bigint[]))::int AS ok
), upserted AS (
  INSERT INTO entries (stream_id, ts, value, point)
  SELECT * FROM unnest($3::bigint[], $4::bigint[], $5::float8[], $6::text[]) WHERE (SELECT ok FROM guard) = 1
  ON CONFLICT (stream_id, ts) DO UPDATE SET value = excluded.value, point = excluded.point
), moved AS (
  UPDATE streams SET last_ts = v.last_ts FROM unnest($7::bigint[], $8::bigint[]) AS v(id, last_ts)
  WHERE streams.id = v.id AND (SELECT ok FROM guard) = 1
)
SELECT (SELECT ok FROM guard) AS ok, (SELECT count(pg_notify($9, p)) FROM unnest($10::text[]) AS p) AS notified`

/** {@link guessedSql} with its values, as a named (prepared) query. */
const guessedQuery = (
  ids: ReadonlyArray<number>,
  expected: ReadonlyArray<Micros | null>,
  a: StoreArrays,
  channel: string
): pg.QueryConfig => ({
  name: "dashstream_store_guessed",
  text: guessedSql,
  values: [ids, expected, a.streamIds, a.tss, a.values, a.points, a.moved, a.lastTss, channel, a.payloads]
})

/**
 * The `last_ts` a group commit expects each stream to hold (microseconds; `null`: none assigned yet), as the groups
 * it planned left them. A guess, never trusted: a group planned on guesses checks every one of them under the row
 * locks of its own transaction ({@link guessedSql}) and falls back to reading the rows when one is wrong (another
 * process wrote the stream, a widget was deleted, a decimation pass or an import ran). Set when a group is planned,
 * before it commits, so that the next group can be planned while this one runs; a group that fails forgets its
 * streams.
 */
export class LastTsGuesses {
  private readonly known = new Map<number, Micros | null>()

  /** At most this many streams are remembered; past it the guesses start again. */
  static readonly maxStreams = 100_000

  /** The guess for the stream `id`, `undefined` when there is none. */
  get(id: number): Micros | null | undefined {
    return this.known.get(id)
  }

  /** The guess for every id of `ids` (same order), or `undefined` when one has none. */
  all(ids: ReadonlyArray<number>): Array<Micros | null> | undefined {
    const out: Array<Micros | null> = []
    for (let i = 0; i < ids.length; i++) {
      const ts = this.known.get(ids[i]!)
      if (ts === undefined && !this.known.has(ids[i]!)) return undefined
      out.push(ts as Micros | null)
    }
    return out
  }

  /** Remembers the stream's `last_ts`. */
  set(id: number, ts: Micros | null): void {
    if (this.known.size >= LastTsGuesses.maxStreams && !this.known.has(id)) this.known.clear()
    this.known.set(id, ts)
  }

  /** Remembers what a plan left each of its streams at. */
  learn(plan: WritePlan): void {
    for (const s of plan.streams()) this.set(s.stream, s.lastTs)
  }

  /** Forgets the streams of `ids`. */
  forget(ids: ReadonlyArray<number>): void {
    for (const id of ids) this.known.delete(id)
  }
}

/**
 * Whether `error` is the guard's of {@link guessedSql}: a guessed `last_ts` was wrong. (Nothing else of a group
 * divides.)
 */
const isStaleGuess = (error: unknown): boolean =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === "22012"

/** What {@link runTransaction} did: each call's domain error (`undefined`: stored) and how the group was planned. */
interface GroupOutcome {
  readonly errors: Array<InvalidPoint | StreamNotFound | undefined>
  /** `guessed`: planned on the guesses, one round trip; `stale`: a guess was wrong, planned again on the rows. */
  readonly planned: "guessed" | "stale" | "read"
}

/**
 * Runs a group in one transaction on `client`, planning each call in arrival order with the core's `WritePlan`.
 *
 * When `useGuesses` holds, no write of the group needs a stream's latest entry ({@link needsLatest}) and `guesses`
 * has every stream of the group, the group is planned on the guesses and stored by ONE prepared statement in one
 * round trip ({@link guessedSql}: row locks in ascending id, each guess checked under them, the changes, the
 * notifications, committed as the statement ends). No lock is held while the group waits for this process. A wrong
 * guess fails the statement before it commits anything: the group is planned again as below. A group that clears a
 * stream, or whose every call fails, is planned as below too.
 *
 * Otherwise two round trips: `BEGIN`, the row locks of every stream of the group in ascending id order (so groups
 * of any number of processes cannot deadlock) and the latest points the group needs, read once the locks are held;
 * then the changes and `COMMIT`. Resolves once committed; throws when a statement or the COMMIT failed.
 */
const runTransaction = async (
  client: pg.PoolClient,
  group: ReadonlyArray<Pending>,
  channel: string,
  guesses: LastTsGuesses,
  useGuesses: boolean
): Promise<GroupOutcome> => {
  const idSet = new Set<number>()
  const latestSet = new Set<number>()
  for (const pending of group) {
    for (const write of pending.writes) {
      const id = write.widget.id as number
      if (!Number.isSafeInteger(id)) throw new Error(`stream id ${String(id)} is not an integer`)
      idSet.add(id)
      if (needsLatest(write.op)) latestSet.add(id)
    }
  }
  const ids = [...idSet].sort((a, b) => a - b)
  let planned: GroupOutcome["planned"] = "read"
  const expected = useGuesses && latestSet.size === 0 ? guesses.all(ids) : undefined
  if (expected !== undefined) {
    // Every stream of the group has a guess (`expected`); planning reads them before `learn` changes any.
    const plan = new WritePlan({ lastTs: (id) => guesses.get(id), latest: () => null })
    const errors = group.map((pending) => plan.add(pending.writes, pending.now))
    const arrays = storeArrays(netChanges(plan))
    // A group whose every call fails is planned on the rows: its errors may come from a wrong guess.
    if (arrays.cleared.length === 0 && !errors.every((e) => e !== undefined)) {
      guesses.learn(plan)
      try {
        await client.query(guessedQuery(ids, expected, arrays, channel))
        return { errors, planned: "guessed" }
      } catch (error) {
        guesses.forget(ids)
        if (!isStaleGuess(error)) throw error
        planned = "stale"
      }
    }
  }
  // Rows are locked in the order the query returns them (ORDER BY is applied before FOR UPDATE). The latest points
  // are read by the next statement of the same round trip, once the locks are held: in READ COMMITTED each statement
  // sees what was committed before it started, so it sees every write that held the locks before this group.
  const latestIds = [...latestSet]
  const results = (await client.query(
    `BEGIN; SELECT id, last_ts FROM streams WHERE id = ANY('{${ids.join(",")}}'::bigint[]) ORDER BY id FOR UPDATE` +
      (latestIds.length > 0 ? `; ${latestSql(latestIds)}` : "")
  )) as unknown as Array<pg.QueryResult<Record<string, unknown>>>
  const lastTs = new Map<number, Micros | null>()
  for (const row of results[1]!.rows as Array<{ id: number; last_ts: number | null }>) {
    lastTs.set(row.id, row.last_ts as Micros | null)
    guesses.set(row.id, row.last_ts as Micros | null)
  }
  const latest = new Map<number, LatestEntry>()
  if (latestIds.length > 0) {
    for (const row of results[2]!.rows as Array<{ stream_id: number; ts: number; point: string }>) {
      latest.set(row.stream_id, { ts: row.ts as Micros, point: JSON.parse(row.point) as StoredPoint })
    }
  }
  // A missing row is a widget deleted after the push looked it up (ids are never reused). The plan asks for the
  // latest entry of a stream only for a write that needs it, and those streams were all loaded above.
  const plan = new WritePlan({
    lastTs: (id) => lastTs.get(id),
    latest: (id) => latest.get(id) ?? null
  })
  const errors = group.map((pending) => plan.add(pending.writes, pending.now))
  if (errors.every((e) => e !== undefined)) {
    await client.query("ROLLBACK")
    return { errors, planned }
  }
  guesses.learn(plan)
  try {
    // The changes and COMMIT in one round trip: a failing statement skips the rest (COMMIT included) and rejects.
    const stored = (await client.query(`${storeSql(storeArrays(netChanges(plan)), channel)}COMMIT`)) as unknown as
      pg.QueryResult | Array<pg.QueryResult>
    const end = Array.isArray(stored) ? stored[stored.length - 1]! : stored
    // COMMIT of a transaction the server already aborted answers ROLLBACK instead of failing.
    if (end.command !== "COMMIT") throw new Error(`COMMIT answered ${end.command}`)
  } catch (error) {
    guesses.forget(ids)
    throw error
  }
  return { errors, planned }
}

/**
 * Group commit of `StreamStore.write` calls on a `pg` pool.
 *
 * A call is queued and a flush is scheduled with `setImmediate`, so every call made while the current I/O phase
 * runs (all the requests parsed in it) joins the same group; calls arriving while {@link GroupLimits.maxInFlight}
 * groups are running wait and form the next group. A group runs in one transaction on one pooled connection:
 * `BEGIN`, `SELECT ... FOR UPDATE` of every stream row of the group in ascending id and the latest points the group
 * needs (one round trip); each call planned in memory in arrival order by the core's `WritePlan`; one statement
 * storing the net change (entries, `last_ts`, `cleared_ts`) and notifying `channel` once per changed stream (see
 * `notify.ts`: PostgreSQL delivers the notifications on COMMIT, never for a rolled-back group) and `COMMIT` (a second
 * round trip). When no write needs a latest entry and the streams' `last_ts` are known from earlier groups
 * ({@link LastTsGuesses}), the group is planned first and stored by one prepared statement that checks those
 * `last_ts` under the row locks (one round trip, see `runTransaction`); after wrong guesses, the next 2, 4, ... 64
 * groups read the rows. A call whose writes do not fit (`InvalidPoint`) or whose widget was deleted
 * (`StreamNotFound`) is left out of the plan and fails alone; the calls after it see the state without it. Every
 * call is resumed only after the `COMMIT` succeeded, so an acknowledged write is committed; when any statement or
 * the `COMMIT` fails, the transaction is rolled back (the connection is discarded) and every call of the group
 * fails with `StorageError` or `StorageUnavailable`.
 */
export class GroupCommit {
  private queue: Array<Pending> = []
  private scheduled: NodeJS.Immediate | undefined = undefined
  private isClosed = false
  private inFlight = 0
  private groupCount = 0
  private callCount = 0
  private drained: Array<() => void> = []
  private readonly guesses = new LastTsGuesses()
  private guessedCount = 0
  private staleCount = 0
  private staleRun = 0
  private guessAfter = 0
  private sweeper: NodeJS.Timeout | undefined = undefined
  private readonly flushNow = (): void => this.flush()
  private readonly sweepNow = (): void => this.sweep()

  constructor(
    private readonly pool: pg.Pool,
    private readonly limits: GroupLimits = defaultGroupLimits,
    private readonly channel: string = channelName("public"),
    private readonly observer: WriteObserver | undefined = undefined
  ) {}

  /** Groups run so far, committed or failed (calls / groups is the mean group size). */
  get groups(): number {
    return this.groupCount
  }

  /** Calls run in those groups (withdrawn calls excluded). */
  get calls(): number {
    return this.callCount
  }

  /** Groups planned on the guessed `last_ts` and committed in one round trip (see `runTransaction`). */
  get guessedGroups(): number {
    return this.guessedCount
  }

  /** Groups planned on guesses that the guard found wrong, then planned again on the rows. */
  get staleGroups(): number {
    return this.staleCount
  }

  /**
   * Queues `writes` (applied in order, all or nothing, see `StreamStore.write`) and succeeds once the group they
   * joined is committed. Fails with the call's own `InvalidPoint` or `StreamNotFound`, with `StorageError` or
   * `StorageUnavailable` when the group's transaction failed, and with `StorageUnavailable` after {@link close}.
   * Interrupting the fiber before its group starts withdraws the call (nothing stored).
   */
  write(writes: ReadonlyArray<StreamWrite>, now: Micros): Effect.Effect<void, WriteError> {
    return queuedWrite(writes, now, this.refusal, this.enqueue)
  }

  /**
   * {@link write} without an effect (see `StreamStore.writeDirect`): `done` is called once, with `undefined` once the
   * group the call joined is committed, else with the error {@link write} would fail with. Cannot be withdrawn.
   */
  writeDirect(writes: ReadonlyArray<StreamWrite>, now: Micros, done: WriteDone): Pending | undefined {
    return queuedWriteDirect(writes, now, this.refusal, this.enqueue, done)
  }

  private readonly refusal = (): WriteError | undefined => (this.isClosed ? closed : undefined)

  private readonly enqueue = (pending: Pending): void => {
    this.queue.push(pending)
    this.schedule()
    if (this.sweeper === undefined) {
      this.sweeper = setInterval(this.sweepNow, Math.max(10, this.limits.maxWaitMs / 4))
      this.sweeper.unref()
    }
  }

  /**
   * Stops accepting calls (later ones fail with `StorageUnavailable`) and resolves once every queued and running
   * group has finished, so no call is left unanswered. Call it before ending the pool.
   */
  close(): Promise<void> {
    this.isClosed = true
    if (this.scheduled !== undefined) {
      clearImmediate(this.scheduled)
      this.scheduled = undefined
    }
    this.flush()
    return new Promise((resolve) => {
      if (this.inFlight === 0 && this.queue.length === 0) resolve()
      else this.drained.push(resolve)
    })
  }

  // Fails the calls that have waited longer than `maxWaitMs` (checked every quarter of it while calls are queued).
  private sweep(): void {
    if (this.queue.length === 0) {
      clearInterval(this.sweeper)
      this.sweeper = undefined
      return
    }
    const deadline = performance.now() - this.limits.maxWaitMs
    if (this.queue[0]!.queuedAt > deadline) return
    const waited = new StorageUnavailable({
      cause: new Error(`no PostgreSQL transaction was free for ${this.limits.maxWaitMs} ms`)
    })
    const kept: Array<Pending> = []
    for (const pending of this.queue) {
      if (pending.cancelled) continue
      if (pending.queuedAt <= deadline) pending.resume(waited)
      else kept.push(pending)
    }
    this.queue = kept
  }

  private schedule(): void {
    if (this.scheduled === undefined && this.queue.length > 0 && this.inFlight < this.limits.maxInFlight) {
      this.scheduled = setImmediate(this.flushNow)
    }
  }

  private flush(): void {
    this.scheduled = undefined
    while (this.inFlight < this.limits.maxInFlight && this.queue.length > 0) {
      const group = this.take()
      if (group.length === 0) continue
      this.inFlight++
      void this.runGroup(group).finally(() => {
        this.inFlight--
        if (this.isClosed) this.flush()
        else this.schedule()
        if (this.inFlight === 0 && this.queue.length === 0) {
          for (const resolve of this.drained.splice(0)) resolve()
        }
      })
    }
  }

  // Takes the next group off the queue: calls in arrival order up to the limits, at least one; drops cancelled ones.
  private take(): Array<Pending> {
    const [group, rest] = takeGroup(this.queue, this.limits)
    this.queue = rest
    return group
  }

  private async runGroup(group: ReadonlyArray<Pending>): Promise<void> {
    let outcome: ReadonlyArray<WriteError | undefined> | StorageFailure
    try {
      outcome = await this.attempt(group)
    } catch (cause) {
      outcome = toStorageFailure(cause)
    }
    this.groupCount++
    this.callCount += group.length
    let points = 0
    for (let i = 0; i < group.length; i++) {
      const error = Array.isArray(outcome) ? (outcome[i] as WriteError | undefined) : (outcome as StorageFailure)
      group[i]!.resume(error)
      if (error === undefined && this.observer !== undefined) points += pointsOf(group[i]!.writes)
    }
    this.observer?.groupCommitted(group.length, points)
  }

  private async attempt(group: ReadonlyArray<Pending>): Promise<ReadonlyArray<WriteError | undefined>> {
    const client = await this.pool.connect()
    try {
      const outcome = await runTransaction(
        client,
        group,
        this.channel,
        this.guesses,
        this.groupCount >= this.guessAfter
      )
      client.release()
      if (outcome.planned === "guessed") {
        this.guessedCount++
        this.staleRun = 0
      } else if (outcome.planned === "stale") {
        // A wrong guess costs a failed statement (a round trip) before the rows are read: after a run of them
        // (streams that other processes write too), guesses are left alone for 2, 4, ... up to 64 groups.
        this.staleCount++
        this.staleRun = Math.min(this.staleRun + 1, 6)
        this.guessAfter = this.groupCount + 1 + 2 ** this.staleRun
      }
      return outcome.errors
    } catch (error) {
      // Released with the error, the client is discarded: the server rolls back a transaction whose connection
      // closes, so nothing of the group is stored.
      client.release(error instanceof Error ? error : new Error(String(error)))
      throw error
    }
  }
}
