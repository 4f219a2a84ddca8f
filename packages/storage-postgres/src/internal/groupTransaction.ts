import {
  type InvalidPoint,
  type LatestEntry,
  type Micros,
  needsLatest,
  type PendingWrite as Pending,
  type StoredPoint,
  type StreamNotFound,
  WritePlan
} from "@dashstream/core"
import type pg from "pg"
import type { LastTsGuesses } from "./lastTsGuesses.js"
import {
  type Merged,
  mergeOld,
  type NetChange,
  netChanges,
  type OverlappedBlock,
  type StoreArrays,
  storeArrays
} from "./changePlan.js"
import { type KnownChange, knownChanges, type OwnNotices } from "./ownNotices.js"
import { guessedQuery, latestSql, occupiedState, overlappedSql, staleGuessState, storeSql } from "./storeSql.js"

/** One group's transaction of the PostgreSQL group commit (see `groupCommit.ts`); its SQL is in `storeSql.ts`. */

/**
 * Whether `error`, from `guessedSql` (`storeSql.ts`), says that a guessed `last_ts` was wrong: the guard's own
 * condition (`staleGuessState`), or a new entry that collided with a stored one (23505) or with another group's
 * (40P01, a deadlock between two such inserts): an entry above its stream's true `last_ts` cannot.
 */
const isStaleGuess = (error: unknown): boolean => {
  const code = codeOf(error)
  return code === staleGuessState || code === "23505" || code === "40P01"
}

/**
 * Whether `error`, from `guessedSql`, says that a run of old entries overlaps stored blocks (its `vacant`'s own
 * condition, `occupiedState`): the guesses were right, the entries need a merge.
 */
const isOccupied = (error: unknown): boolean => codeOf(error) === occupiedState

const codeOf = (error: unknown): unknown =>
  typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined

/**
 * Sends a group's `guessedSql` statement. A group planned before this one on some of its streams may still be
 * running (`ahead`): each statement inserts its new entries before it asks for the row locks, so when that group's
 * took longer (more entries, or it started late), this one took the locks first, found the `last_ts` before that
 * group and failed its guard (`staleGuessState`), having stored nothing; or its plain insert of a back-filled run met an entry
 * such a group committed after this statement's snapshot (23505, see `guessedSql`). It is then sent again, once,
 * after those groups ended: it fails again only when a guess was wrong. (Waiting for them in the statement, with
 * advisory locks, was measured to deadlock: a group holds a lock it waited for until it ends.)
 */
const storeGuessed = async (
  client: pg.PoolClient,
  query: ReturnType<typeof guessedQuery>,
  ahead: Promise<void> | undefined
): Promise<void> => {
  try {
    await client.query(query)
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (ahead === undefined || (code !== staleGuessState && code !== "23505")) throw error
    await ahead
    await client.query(query)
  }
}

/** What {@link runTransaction} did: each call's domain error (`undefined`: stored) and how the group was planned. */
export interface GroupOutcome {
  readonly errors: Array<InvalidPoint | StreamNotFound | undefined>
  /**
   * `guessed`: planned on the guesses, one round trip; `stale`: a guess was wrong, planned again on the rows;
   * `occupied`: the guesses were right but old entries overlapped stored blocks, planned again on the rows to merge
   * them; `read`: planned on the rows from the start.
   */
  readonly planned: "guessed" | "stale" | "occupied" | "read"
}

/**
 * Runs a group in one transaction on `client`, planning each call in arrival order with the core's `WritePlan`.
 *
 * When `useGuesses` holds, no write of the group needs a stream's latest entry ({@link needsLatest}) and `guesses`
 * has every stream of the group, the group is planned on the guesses and stored by ONE prepared statement in one
 * round trip (`guessedSql`: row locks in ascending id, each guess checked under them, the changes, the
 * notifications, committed as the statement ends). No lock is held while the group waits for this process. A wrong
 * guess fails the statement before it commits anything: the group is planned again as below, and so is a group
 * whose old entries (replacing or back-filling) overlap stored blocks (`isOccupied`). A group that clears a stream,
 * or whose every call fails, is planned as below too.
 *
 * Otherwise two round trips: `BEGIN`, the row locks of every stream of the group in ascending id order (so groups
 * of any number of processes cannot deadlock) and the latest points the group needs, read once the locks are held;
 * then the changes and `COMMIT` (with old entries, a round trip between them reads the stored blocks they overlap, to
 * merge them). A transaction the server aborted as a deadlock's victim stored nothing and runs again, at most 3 times
 * in all (see `maxDeadlockAttempts`). Resolves once committed; throws when a statement or the COMMIT failed.
 */
export const runTransaction = async (
  client: pg.PoolClient,
  group: ReadonlyArray<Pending>,
  channel: string,
  guesses: LastTsGuesses,
  useGuesses: boolean,
  own?: OwnNotices
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
  if (useGuesses && latestSet.size === 0) {
    // A group reading some of these rows is about to learn their true last_ts: planned on the guesses now, this one
    // would be found wrong under the locks (after storing its new entries for nothing). It waits for that group.
    const read = guesses.settled(ids)
    if (read !== undefined) await read
  }
  const expected = useGuesses && latestSet.size === 0 ? guesses.all(ids) : undefined
  if (expected !== undefined) {
    // Every stream of the group has a guess (`expected`); planning reads them before `learn` changes any.
    const plan = new WritePlan({ lastTs: (id) => guesses.get(id), latest: () => null })
    const errors = group.map((pending) => plan.add(pending.writes, pending.now))
    const changes = netChanges(plan)
    const arrays = storeArrays(changes)
    // A group whose every call fails is planned on the rows: its errors may come from a wrong guess.
    if (arrays.cleared.length === 0 && !errors.every((e) => e !== undefined)) {
      guesses.learn(plan)
      const turn = guesses.turn(ids)
      const known = expectOwn(own, client, changes, arrays)
      try {
        await storeGuessed(client, guessedQuery(ids, expected, arrays, channel), guesses.ahead(turn.after))
        return { errors, planned: "guessed" }
      } catch (error) {
        withdrawOwn(own, client, known)
        guesses.forget(ids)
        if (isOccupied(error)) planned = "occupied"
        else if (!isStaleGuess(error)) throw error
        else planned = "stale"
      } finally {
        turn.ended()
      }
    }
  }
  // Rows are locked in the order the query returns them (ORDER BY is applied before FOR UPDATE). The latest points
  // are read by the next statement of the same round trip, once the locks are held: in READ COMMITTED each statement
  // sees what was committed before it started, so it sees every write that held the locks before this group.
  const latestIds = [...latestSet]
  for (let attempt = 1; ; attempt++) {
    const learned = guesses.reading(ids)
    try {
      return await readAndStore(client, group, channel, guesses, ids, latestIds, planned, learned, own)
    } catch (error) {
      if (attempt >= maxDeadlockAttempts || codeOf(error) !== "40P01") throw error
      // The server rolled back everything of the transaction but it still has to be ended before the next BEGIN.
      await client.query("ROLLBACK")
    } finally {
      learned()
    }
  }
}

/**
 * How many times a group planned on the rows runs when PostgreSQL ends it as a deadlock's victim (40P01). Its own
 * row locks are taken in ascending id, but a group of ANOTHER process planned on guesses inserts its new blocks
 * before it asks for the row locks (`guessedSql`): when this group, holding a row lock, inserts a block with the
 * same `first_ts` as that group's uncommitted one, each waits for the other, and the server aborts one of them. The
 * guessed one is planned again (`isStaleGuess`); this one stored nothing and is run again, from `BEGIN`.
 */
const maxDeadlockAttempts = 3

// The two round trips of a group planned on the rows (see `runTransaction`).
const readAndStore = async (
  client: pg.PoolClient,
  group: ReadonlyArray<Pending>,
  channel: string,
  guesses: LastTsGuesses,
  ids: ReadonlyArray<number>,
  latestIds: ReadonlyArray<number>,
  planned: GroupOutcome["planned"],
  learned: () => void,
  own: OwnNotices | undefined
): Promise<GroupOutcome> => {
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
  // A group waiting to plan on these guesses may go on now (and insert its new entries while this one commits).
  learned()
  let known: ReadonlyArray<KnownChange> = []
  try {
    const changes = netChanges(plan)
    const arrays = storeArrays(changes)
    // Old entries are merged into the stored blocks they overlap, read under the locks (one more round trip).
    let merged: Merged | undefined = undefined
    if (arrays.old.size > 0) {
      const overlapped = await client.query<OverlappedBlock>(overlappedSql(arrays))
      merged = mergeOld(arrays, overlapped.rows)
    }
    known = expectOwn(own, client, changes, arrays)
    // The changes and COMMIT in one round trip: a failing statement skips the rest (COMMIT included) and rejects.
    const stored = (await client.query(`${storeSql(arrays, merged, channel)}COMMIT`)) as unknown as
      pg.QueryResult | Array<pg.QueryResult>
    const end = Array.isArray(stored) ? stored[stored.length - 1]! : stored
    // COMMIT of a transaction the server already aborted answers ROLLBACK instead of failing.
    if (end.command !== "COMMIT") throw new Error(`COMMIT answered ${end.command}`)
  } catch (error) {
    withdrawOwn(own, client, known)
    guesses.forget(ids)
    throw error
  }
  return { errors, planned }
}

// The changes of the followed streams the group is about to store, kept for the listener (see `ownNotices.ts`) under
// the connection's backend pid; none without `own` or a known pid.
const expectOwn = (
  own: OwnNotices | undefined,
  client: pg.PoolClient,
  changes: ReadonlyMap<number, NetChange>,
  arrays: StoreArrays
): ReadonlyArray<KnownChange> => {
  const pid = backendPid(client)
  if (own === undefined || pid === undefined) return []
  const known = knownChanges(changes, arrays, own.follows)
  own.expect(pid, known)
  return known
}

// The transaction failed: its kept changes are forgotten (a notification it may still send is read back).
const withdrawOwn = (own: OwnNotices | undefined, client: pg.PoolClient, known: ReadonlyArray<KnownChange>): void => {
  const pid = backendPid(client)
  if (own !== undefined && pid !== undefined) own.withdraw(pid, known)
}

// The backend pid of the connection (what its notifications carry), once it is known.
const backendPid = (client: pg.PoolClient): number | undefined => {
  const pid = (client as { processID?: number | null }).processID
  return typeof pid === "number" ? pid : undefined
}
