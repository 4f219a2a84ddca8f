import {
  type AccountId,
  AccountNotFound,
  type AccountStore,
  Conflict,
  quoted,
  type StorageError,
  type StorageFailure,
  type StreamId,
  StreamNotFound,
  type Widget
} from "@dashstream/core"
import { Effect, Either, Option } from "effect"
import { sql } from "kysely"
import type pg from "pg"
import { sqlState, toStorageFailure } from "./internal/errors.js"
import { channelName } from "./internal/notify.js"
import { db, run, transaction } from "./internal/sql.js"
import { toWidget, WidgetLookups } from "./internal/widgetLookups.js"

const accountNotFound = (id: string) => new AccountNotFound({ message: `no account with id ${quoted(id)}` })

const streamNotFound = (name: string) =>
  new StreamNotFound({ message: `no widget with stream name ${quoted(name)} in this account` })

const accountExists = (on: pg.Pool | pg.PoolClient, id: string) =>
  run(on, db.selectFrom("accounts").select("id").where("id", "=", id).compile()).then((rows) => rows.length > 0)

/**
 * Deletes the stream `$2` of account `$1` and notifies channel `$3` of it (`{"s":<id>,"d":1}`, see
 * `internal/notify.ts`) in the same statement, so the notification is delivered on its commit only.
 */
const deleteStreamStatement = `with deleted as (delete from streams where account_id = $1 and name = $2 returning id)
  select id, pg_notify($3::text, '{"s":' || id || ',"d":1}') from deleted`

/**
 * The `AccountStore` port on a `pg` pool (docs/api.md section 7). Times are integer microseconds; access keys are only
 * seen as SHA-256 digests. Errors: the port's domain errors, `StorageUnavailable` when the server is unreachable,
 * `StorageError` otherwise. Widgets are listed in code point order of their stream names (`COLLATE "C"`).
 * `deleteWidget` notifies `channel` of the deletion (live updates, docs/api.md section 10; see `internal/notify.ts`).
 */
export const makeAccountStore = (pool: pg.Pool, channel: string = channelName("public")): AccountStore["Type"] => {
  const attempt = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: toStorageFailure })
  const lookups = new WidgetLookups(pool)
  return {
    createAccount: (account, key) =>
      attempt(() =>
        transaction(pool, async (client) => {
          await run(
            client,
            db
              .insertInto("accounts")
              .values({ id: account.id, name: account.name, created_at: account.createdAt })
              .compile()
          )
          await run(
            client,
            db
              .insertInto("access_keys")
              .values({ digest: key, account_id: account.id, created_at: account.createdAt, revoked_at: null })
              .compile()
          )
          return { commit: true, value: undefined }
        })
      ),

    getAccount: (id) =>
      attempt(() =>
        run(pool, db.selectFrom("accounts").select(["id", "name", "created_at"]).where("id", "=", id).compile())
      ).pipe(
        Effect.map((rows) =>
          Option.map(Option.fromNullable(rows[0]), (row) => ({
            id: row.id as AccountId,
            name: row.name,
            createdAt: row.created_at
          }))
        )
      ),

    listAccounts: attempt(() =>
      run(
        pool,
        db
          .selectFrom("accounts")
          .select(["id", "name", "created_at"])
          // Ids are compared as bytes, as SQLite compares them, so both list accounts created together alike.
          .orderBy("created_at")
          .orderBy(sql`id collate "C"`)
          .compile()
      )
    ).pipe(
      Effect.map((rows) => rows.map((row) => ({ id: row.id as AccountId, name: row.name, createdAt: row.created_at })))
    ),

    countAccounts: attempt(() =>
      run(
        pool,
        db
          .selectFrom("accounts")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .compile()
      )
    ).pipe(Effect.map((rows) => Number(rows[0]?.n ?? 0))),

    addAccessKey: (id, key, createdAt, revokeOthers) =>
      attempt(() =>
        transaction(pool, async (client) => {
          // Locking the account row serialises concurrent key rotations of one account.
          const found = await run(
            client,
            db.selectFrom("accounts").select("id").where("id", "=", id).forUpdate().compile()
          )
          if (found.length === 0) return { commit: false, value: false }
          if (revokeOthers) {
            await run(
              client,
              db
                .updateTable("access_keys")
                .set({ revoked_at: createdAt })
                .where("account_id", "=", id)
                .where("revoked_at", "is", null)
                .compile()
            )
          }
          await run(
            client,
            db
              .insertInto("access_keys")
              .values({ digest: key, account_id: id, created_at: createdAt, revoked_at: null })
              .compile()
          )
          return { commit: true, value: true }
        })
      ).pipe(Effect.flatMap((found) => (found ? Effect.void : Effect.fail(accountNotFound(id))))),

    // PostgreSQL answers only asynchronously: the hot paths go through the account cache (`withAccountCache`).
    peekAccount: () => undefined,
    peekWidget: () => undefined,
    // The read lane's lookup of a widget the cache does not hold: a callback, no fiber; batched with the others
    // (`WidgetLookups`), which answers through core's `answerGuarded`: a throw from `done` is answered, never a crash.
    lookupWidget: (id, name, done) => lookups.find(id, [name], (error, found) => done(error, found.get(name) ?? null)),

    findAccountByKey: (key) =>
      attempt(() =>
        run(
          pool,
          db
            .selectFrom("access_keys")
            .select("account_id")
            .where("digest", "=", key)
            .where("revoked_at", "is", null)
            .compile()
        )
      ).pipe(Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => row.account_id as AccountId))),

    createWidget: (id, streamName, type, createdAt) =>
      Effect.tryPromise({
        try: () =>
          run(
            pool,
            db
              .insertInto("streams")
              .values({ account_id: id, name: streamName, type, created_at: createdAt, last_ts: null })
              .returning("id")
              .compile()
          ),
        catch: (cause) => {
          const state = sqlState(cause)
          if (state === "23505") {
            return new Conflict({
              message: `the stream name ${quoted(streamName)} is already taken in this account`
            })
          }
          if (state === "23503") return accountNotFound(id)
          return toStorageFailure(cause)
        }
      }).pipe(
        Effect.map((rows): Widget => ({ id: rows[0]!.id as StreamId, accountId: id, streamName, type, createdAt }))
      ),

    listWidgets: (id) =>
      attempt(async () => {
        // One round trip: the account row (to tell "no account" from "no widgets") joined with its streams.
        const rows = await run(
          pool,
          db
            .selectFrom("accounts as a")
            .leftJoin("streams as s", "s.account_id", "a.id")
            .select(["s.id", "s.name", "s.type", "s.created_at"])
            .where("a.id", "=", id)
            .orderBy(sql`s.name collate "C"`)
            .compile()
        )
        return rows
      }).pipe(
        Effect.flatMap((rows): Effect.Effect<ReadonlyArray<Widget>, AccountNotFound | StorageError> => {
          if (rows.length === 0) return Effect.fail(accountNotFound(id))
          const widgets: Array<Widget> = []
          for (const row of rows) {
            if (row.id === null || row.name === null || row.type === null || row.created_at === null) continue
            const widget = toWidget({
              ...row,
              id: row.id,
              name: row.name,
              type: row.type,
              created_at: row.created_at,
              account_id: id
            })
            if (Either.isLeft(widget)) return Effect.fail(widget.left)
            widgets.push(widget.right)
          }
          return Effect.succeed(widgets)
        })
      ),

    // Batched with every lookup asked for meanwhile (`WidgetLookups`): one query for a burst of cache misses.
    findWidgets: (id, names) =>
      names.length === 0
        ? Effect.succeed(new Map())
        : Effect.async<ReadonlyMap<string, Widget>, StorageFailure>((resume) =>
            lookups.find(id, names, (error, found) =>
              resume(error === undefined ? Effect.succeed(found) : Effect.fail(error))
            )
          ),

    deleteWidget: (id, streamName) =>
      attempt(async () => {
        // Deleting the row takes its lock, so a write in progress on the stream finishes first; entries go with it
        // (ON DELETE CASCADE).
        // The notification of live updates (`notify.ts`) is sent by the same statement, so on its commit only.
        const deleted = await pool.query<{ id: number }>(deleteStreamStatement, [id, streamName, channel])
        if (deleted.rows.length > 0) return "deleted" as const
        return (await accountExists(pool, id)) ? ("no-stream" as const) : ("no-account" as const)
      }).pipe(
        Effect.flatMap((outcome) =>
          outcome === "deleted"
            ? Effect.void
            : Effect.fail(outcome === "no-stream" ? streamNotFound(streamName) : accountNotFound(id))
        )
      )
  }
}
