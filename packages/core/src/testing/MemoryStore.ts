import { Context, Effect, Either, Layer, Option } from "effect"
import * as MemoryAlertStore from "./MemoryAlertStore.js"
import { type Account, type AccountId, digestAccessKey, type KeyDigest } from "../Account.js"
import { AccountStore } from "../AccountStore.js"
import type { Dashboard, DashboardChange, DashboardId } from "../Dashboard.js"
import { DashboardStore } from "../DashboardStore.js"
import { deletedChange, Fanout, type PendingChange } from "../ChangeFeed.js"
import { type DecimationEntry, DecimationStore, type EntryId } from "../DecimationStore.js"
import { AccountNotFound, Conflict, type InvalidPoint, quoted, StorageError, StreamNotFound } from "../Errors.js"
import type { StoredPoint } from "../Point.js"
import type { Rotation, RotationChange, RotationId } from "../Rotation.js"
import type { SharedView, ViewStorage } from "../SharedView.js"
import { readsAsSummary, storesSummary, summarizeBlock } from "../BlockSummary.js"
import { readRangeFrom } from "../RangeRead.js"
import { blockSize, encodeBlock } from "../entryBlocks.js"
import { SessionStore } from "../SessionStore.js"
import { type StoragePorts, type StorageServices, storageContext } from "../StoragePorts.js"
import {
  type ReadQuery,
  renderPage,
  type StoredEntry,
  StreamStore,
  type StreamWrite,
  withEffectForms
} from "../StreamStore.js"
import type { Micros } from "../Time.js"
import type { ViewTokenDigest } from "../ViewToken.js"
import type { StreamId, Widget } from "../Widget.js"
import { WritePlan } from "../WritePlan.js"

/**
 * An in-memory adapter of the storage ports, for unit tests of code that asks for them. It has the semantics the
 * storage contract suites check of every adapter (docs/api.md sections 3, 4, 6, 7, 9); nothing survives the layer.
 */

interface Entry {
  readonly id: EntryId
  readonly ts: Micros
  readonly point: StoredPoint
  readonly json: string
  readonly value: number | null
}

interface StreamData {
  lastTs: Micros | null
  /** The ts of the last clear (`Mutation.clearedAt`). */
  lastClear: Micros | null
  // Ascending by ts, at most one entry per ts.
  entries: Array<Entry>
}

interface State {
  readonly accounts: Map<AccountId, Account>
  readonly keys: Map<KeyDigest, { readonly accountId: AccountId; revoked: boolean }>
  readonly widgets: Map<StreamId, Widget>
  readonly data: Map<StreamId, StreamData>
  /** Dashboards in creation order, each with its current view token digest. */
  readonly dashboards: Map<DashboardId, { view: Dashboard; digest: ViewTokenDigest }>
  /** Rotations in creation order, each with its current view token digest. */
  readonly rotations: Map<RotationId, { view: Rotation; digest: ViewTokenDigest }>
  nextStreamId: number
  nextEntryId: number
  /** Signed-out console sessions: id -> when the session expires (microseconds). */
  readonly endedSessions: Map<string, Micros>
  /** Whether a decimation pass holds the pass lock. */
  passLocked: boolean
  /** Subscribers of stream changes; published to after each write (memory is "durable" once written). */
  readonly fanout: Fanout
}

/** The storage ports over one in-memory state. */
export interface MemoryStores extends StorageServices {
  /** The fan-out behind `changeFeed`, for tests that publish a `Gap` themselves. */
  readonly fanout: Fanout
}

// Stream names are listed in code-point order, the order of SQLite's BINARY collation (UTF-8 bytes).
const compareNames = (a: string, b: string): number => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"))

const accountNotFound = (id: AccountId) => new AccountNotFound({ message: `no account with id ${quoted(id)}` })

// Index of the first entry whose ts is > `ts` (binary search over the ascending entries).
const upperBound = (entries: ReadonlyArray<Entry>, ts: number): number => {
  let lo = 0
  let hi = entries.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (entries[mid]!.ts <= ts) lo = mid + 1
    else hi = mid
  }
  return lo
}

// Inserts in ts order; an entry with the same ts is replaced (docs/api.md section 3, replace on equal ts) and keeps its
// id, as an SQL upsert updates the row in place.
const upsert = (state: State, entries: Array<Entry>, entry: Omit<Entry, "id">): void => {
  const i = upperBound(entries, entry.ts)
  if (i > 0 && entries[i - 1]!.ts === entry.ts) entries[i - 1] = { ...entry, id: entries[i - 1]!.id }
  else entries.splice(i, 0, { ...entry, id: state.nextEntryId++ as EntryId })
}

const makeState = (): State => ({
  accounts: new Map(),
  keys: new Map(),
  widgets: new Map(),
  data: new Map(),
  dashboards: new Map(),
  rotations: new Map(),
  endedSessions: new Map(),
  nextStreamId: 1,
  nextEntryId: 1,
  passLocked: false,
  fanout: new Fanout()
})

const accountStore = (state: State): Context.Tag.Service<AccountStore> => {
  const requireAccount = (id: AccountId) => (state.accounts.has(id) ? Effect.void : Effect.fail(accountNotFound(id)))
  const widgetsOf = (id: AccountId) => [...state.widgets.values()].filter((w) => w.accountId === id)
  const accountOf = (key: KeyDigest): AccountId | undefined => {
    const k = state.keys.get(key)
    return k === undefined || k.revoked ? undefined : k.accountId
  }
  return {
    createAccount: (account, key) =>
      Effect.sync(() => {
        state.accounts.set(account.id, account)
        state.keys.set(key, { accountId: account.id, revoked: false })
      }),
    getAccount: (id) => Effect.sync(() => Option.fromNullable(state.accounts.get(id))),
    listAccounts: Effect.sync(() =>
      [...state.accounts.values()].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    ),
    countAccounts: Effect.sync(() => state.accounts.size),
    addAccessKey: (id, key, _createdAt, revokeOthers) =>
      Effect.zipRight(
        requireAccount(id),
        Effect.sync(() => {
          if (revokeOthers) {
            for (const k of state.keys.values()) if (k.accountId === id) k.revoked = true
          }
          state.keys.set(key, { accountId: id, revoked: false })
        })
      ),
    findAccountByKey: (key) => Effect.sync(() => Option.fromNullable(accountOf(key))),
    peekAccount: (accessKey) => (accessKey === "" ? undefined : accountOf(digestAccessKey(accessKey))),
    peekWidget: (id, name) => widgetsOf(id).find((w) => w.streamName === name) ?? null,
    createWidget: (id, streamName, type, createdAt) =>
      Effect.zipRight(
        requireAccount(id),
        Effect.suspend(() => {
          if (widgetsOf(id).some((w) => w.streamName === streamName)) {
            return Effect.fail(new Conflict({ message: `the stream name ${quoted(streamName)} is already taken` }))
          }
          const widget: Widget = { id: state.nextStreamId++ as StreamId, accountId: id, streamName, type, createdAt }
          state.widgets.set(widget.id, widget)
          state.data.set(widget.id, { lastTs: null, lastClear: null, entries: [] })
          return Effect.succeed(widget)
        })
      ),
    listWidgets: (id) =>
      Effect.zipRight(
        requireAccount(id),
        Effect.sync(() => widgetsOf(id).sort((a, b) => compareNames(a.streamName, b.streamName)))
      ),
    findWidgets: (id, names) =>
      Effect.sync(() => {
        const wanted = new Set(names)
        const found = new Map<string, Widget>()
        for (const w of widgetsOf(id)) if (wanted.has(w.streamName)) found.set(w.streamName, w)
        return found
      }),
    deleteWidget: (id, streamName) =>
      Effect.zipRight(
        requireAccount(id),
        Effect.suspend(() => {
          const widget = widgetsOf(id).find((w) => w.streamName === streamName)
          if (widget === undefined) {
            return Effect.fail(
              new StreamNotFound({
                message: `no widget with stream name ${quoted(streamName)} in this account`
              })
            )
          }
          state.widgets.delete(widget.id)
          state.data.delete(widget.id)
          state.fanout.publish(widget.id, deletedChange)
          return Effect.void
        })
      )
  }
}

const streamStore = (state: State): Context.Tag.Service<StreamStore> => {
  const plan = new WritePlan({
    lastTs: (id) => state.data.get(id)?.lastTs,
    latest: (id) => {
      const entries = state.data.get(id)!.entries
      return entries[entries.length - 1] ?? null
    }
  })
  const followed = (id: StreamId) => state.fanout.has(id)
  // The plan finds every error before anything is stored, which is the all-or-nothing of one transaction; being
  // synchronous, concurrent calls are serialised.
  const writeSync = (
    writes: ReadonlyArray<StreamWrite>,
    now: Micros
  ): Either.Either<void, InvalidPoint | StreamNotFound> => {
    plan.reset()
    const error = plan.add(writes, now)
    if (error !== undefined) return Either.left(error)
    for (let i = 0; i < plan.size; i++) {
      const data = state.data.get(plan.streamAt(i))!
      const m = plan.mutation(i)
      if (m.clear) {
        data.entries = []
        data.lastClear = m.clearedAt
      }
      for (const e of m.entries) upsert(state, data.entries, { ts: e.ts, point: e.point, json: e.json, value: e.value })
      data.lastTs = m.lastTs
    }
    if (state.fanout.streams > 0) {
      const changes: Array<PendingChange> = []
      plan.changes(followed, changes)
      for (const c of changes) state.fanout.publishAll(c.stream, c.changes)
    }
    return Either.void
  }

  const readSync = (id: StreamId, query: ReadQuery): ReadonlyArray<StoredEntry> => {
    const entries = state.data.get(id)?.entries ?? []
    const toStored = (e: Entry): StoredEntry => ({ ts: e.ts, json: e.json })
    if (query.since === null) return entries.length === 0 ? [] : [toStored(entries[entries.length - 1]!)]
    const from = upperBound(entries, query.since)
    const to = query.limit === null ? entries.length : Math.min(entries.length, from + query.limit)
    return entries.slice(from, to).map(toStored)
  }

  return withEffectForms({
    writeDirect: (writes, now, done) => {
      const written = writeSync(writes, now)
      done(Either.isLeft(written) ? written.left : undefined)
      return undefined
    },
    readDirect: (id, query, done) => done(undefined, readSync(id, query)),
    readPage: (id, since, limit) => Effect.sync(() => renderPage(readSync(id, { since, limit }))),
    readRange: (id, query) =>
      readRangeFrom(
        {
          page: (after, to, limit) =>
            Effect.sync(() => {
              const entries = state.data.get(id)?.entries ?? []
              const from = upperBound(entries, after)
              const end = Math.min(from + limit, to === null ? entries.length : upperBound(entries, to))
              return from >= end ? [] : entries.slice(from, end)
            }),
          newest: Effect.sync(() => state.data.get(id)?.entries.at(-1)?.ts ?? null),
          // The entries as if stored in blocks of `blockSize`, counted from the first one asked for, each given as
          // its summary when the read may take it.
          blocks: (after, to, limit, buckets) =>
            Effect.sync(() => {
              const entries = state.data.get(id)?.entries ?? []
              const from = upperBound(entries, after)
              const end = Math.min(from + limit * blockSize, upperBound(entries, to))
              const data = []
              for (let i = from; i < end; i += blockSize) {
                const j = Math.min(end, i + blockSize)
                const block = encodeBlock(entries, i, j).data
                const whole =
                  buckets === null ||
                  !storesSummary(j - i) ||
                  !readsAsSummary(buckets, after, to, entries[i]!.ts, entries[j - 1]!.ts)
                data.push(whole ? block : summarizeBlock(block))
              }
              return { blocks: data.length, data }
            })
        },
        query
      ),
    readLive: (id, query) =>
      Effect.sync(() => {
        const data = state.data.get(id)
        if (data === undefined) return Option.none()
        const entries =
          query._tag === "After"
            ? readSync(id, { since: query.since, limit: query.limit })
            : data.entries
                .slice(-query.count)
                .slice(0, query.limit ?? query.count)
                .map((e) => ({ ts: e.ts, json: e.json }))
        return Option.some({ lastClear: data.lastClear, entries })
      }),
    ping: Effect.void
  })
}

const decimationStore = (state: State): Context.Tag.Service<DecimationStore> => ({
  streams: ({ after, limit, olderThan }) =>
    Effect.sync(() =>
      [...state.widgets.values()]
        .filter(
          (w) => (after === null || w.id > after) && (state.data.get(w.id)?.entries[0]?.ts ?? olderThan) < olderThan
        )
        .sort((a, b) => a.id - b.id)
        .slice(0, limit)
        .map((w) => ({ id: w.id, type: w.type }))
    ),
  entries: (stream, { after, before, limit }) =>
    Effect.sync(() => {
      const entries = state.data.get(stream)?.entries ?? []
      const chunk: Array<DecimationEntry> = []
      for (let i = after === null ? 0 : upperBound(entries, after); i < entries.length && chunk.length < limit; i++) {
        const e = entries[i]!
        if (e.ts >= before) break
        chunk.push({ id: e.id, ts: e.ts, value: e.value })
      }
      return chunk
    }),
  deleteEntries: (stream, ids) =>
    Effect.sync(() => {
      const data = state.data.get(stream)
      if (data === undefined || data.entries.length === 0) return 0
      const doomed = new Set<EntryId>(ids)
      const entries = data.entries
      const kept: Array<Entry> = []
      // The last entry is the newest: never deleted.
      for (let i = 0; i < entries.length - 1; i++) if (!doomed.has(entries[i]!.id)) kept.push(entries[i]!)
      kept.push(entries[entries.length - 1]!)
      const deleted = entries.length - kept.length
      data.entries = kept
      return deleted
    }),
  withPassLock: (effect) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        if (state.passLocked) return Effect.succeedNone
        state.passLocked = true
        return restore(Effect.asSome(effect)).pipe(
          Effect.ensuring(
            Effect.sync(() => {
              state.passLocked = false
            })
          )
        )
      })
    )
})

/**
 * One kind of shared view over a map of the state (creation order kept by the map): the generic {@link ViewStorage}.
 * `check` refuses a view or change the kind's rules would refuse in a database (a foreign key), `apply` makes a change.
 */
const viewStorage = <A extends SharedView, Change>(
  state: State,
  views: Map<A["id"], { view: A; digest: ViewTokenDigest }>,
  apply: (view: A, change: Change) => A,
  check: (dashboardIds: ReadonlyArray<string>) => StorageError | undefined
): ViewStorage<A, Change> => {
  const lookup = (account: AccountId, id: A["id"]) => {
    const found = views.get(id)
    return found !== undefined && found.view.accountId === account ? found : undefined
  }
  const byCreation = (a: A, b: A) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  const referenced = (view: A | Change) =>
    "dashboardIds" in (view as object) ? (view as { dashboardIds: ReadonlyArray<string> }).dashboardIds : []
  return {
    create: (view, digest) =>
      Effect.suspend((): Effect.Effect<void, AccountNotFound | StorageError> => {
        if (!state.accounts.has(view.accountId)) return Effect.fail(accountNotFound(view.accountId))
        const refused = check(referenced(view))
        if (refused !== undefined) return Effect.fail(refused)
        views.set(view.id, { view: structuredClone(view), digest })
        return Effect.void
      }),
    list: (account) =>
      Effect.sync(() =>
        [...views.values()]
          .map((v) => v.view)
          .filter((v) => v.accountId === account)
          .sort(byCreation)
      ),
    get: (account, id) => Effect.sync(() => Option.fromNullable(lookup(account, id)?.view)),
    update: (account, id, change) =>
      Effect.suspend(() => {
        const found = lookup(account, id)
        if (found === undefined) return Effect.succeed(Option.none())
        const refused = check(referenced(change))
        if (refused !== undefined) return Effect.fail(refused)
        found.view = apply(found.view, structuredClone(change))
        return Effect.succeed(Option.some(found.view))
      }),
    delete: (account, id) => Effect.sync(() => lookup(account, id) !== undefined && views.delete(id)),
    setViewToken: (account, id, viewToken, digest) =>
      Effect.sync(() => {
        const found = lookup(account, id)
        if (found === undefined) return Option.none()
        found.view = { ...found.view, viewToken }
        found.digest = digest
        return Option.some(found.view)
      }),
    findByViewToken: (digest) =>
      Effect.sync(() => Option.fromNullable([...views.values()].find((v) => v.digest === digest)?.view))
  }
}

const dashboardStore = (state: State): Context.Tag.Service<DashboardStore> => {
  const dashboards = viewStorage<Dashboard, DashboardChange>(
    state,
    state.dashboards,
    (dashboard, change) => ({ ...dashboard, ...change }),
    () => undefined
  )
  const rotations = viewStorage<Rotation, RotationChange>(
    state,
    state.rotations,
    (rotation, change) => ({ ...rotation, ...change }),
    (dashboardIds) =>
      dashboardIds.some((id) => !state.dashboards.has(id as DashboardId))
        ? new StorageError({ cause: new Error("a rotation's dashboard does not exist") })
        : undefined
  )
  return {
    rotations,
    dashboards: {
      ...dashboards,
      delete: (account, id) =>
        Effect.map(dashboards.delete(account, id), (deleted) => {
          // A deleted dashboard leaves every rotation (docs/api.md section 15).
          if (deleted) {
            for (const found of state.rotations.values()) {
              const { view } = found
              if (view.dashboardIds.includes(id))
                found.view = { ...view, dashboardIds: view.dashboardIds.filter((d) => d !== id) }
            }
          }
          return deleted
        })
    }
  }
}

const sessionStore = (state: State): Context.Tag.Service<SessionStore> => ({
  endSession: (id, expiresAt, now) =>
    Effect.sync(() => {
      for (const [ended, until] of state.endedSessions) if (until < now) state.endedSessions.delete(ended)
      state.endedSessions.set(id, expiresAt)
    }),
  isSessionEnded: (id) => Effect.sync(() => state.endedSessions.has(id))
})

/**
 * The ports over a fresh, empty in-memory state. Never fails with a storage error; domain errors as the ports
 * document them.
 */
export const make: Effect.Effect<MemoryStores> = Effect.sync(() => {
  const state = makeState()
  return {
    accountStore: accountStore(state),
    streamStore: streamStore(state),
    decimationStore: decimationStore(state),
    dashboardStore: dashboardStore(state),
    changeFeed: state.fanout.feed(),
    sessionStore: sessionStore(state),
    alertStore: MemoryAlertStore.make(state.accounts, state.widgets),
    fanout: state.fanout
  }
})

/**
 * Provides `AccountStore`, `StreamStore`, `DecimationStore`, `DashboardStore`, `ChangeFeed`, `SessionStore` and
 * `AlertStore` over one fresh in-memory state per build of the layer.
 */
export const layer: Layer.Layer<StoragePorts> = Layer.effectContext(Effect.map(make, storageContext))
