import type Database from "better-sqlite3"
import {
  type Account,
  AccountNotFound,
  type AccountId,
  type AccountStore,
  Conflict,
  digestAccessKey,
  deletedChange,
  type ChangeSink,
  isWidgetType,
  quoted,
  StreamNotFound,
  type StreamId,
  type StreamName,
  type Widget
} from "@dashstream/core"
import { type Context, Effect, Option } from "effect"
import type { Compilable, Kysely } from "kysely"
import { sqliteCode, storageFailure } from "./internal/errors.js"
import { Sql } from "./internal/statements.js"
import type { Tables } from "./internal/tables.js"

interface WidgetRow {
  readonly id: number
  readonly account_id: string
  readonly name: string
  readonly type: string
  readonly created_at: number
}

const toWidget = (row: WidgetRow): Widget => {
  if (!isWidgetType(row.type))
    throw new Error(`stream ${row.id} has an unknown widget type ${JSON.stringify(row.type)}`)
  return {
    id: row.id as StreamId,
    accountId: row.account_id as AccountId,
    streamName: row.name as StreamName,
    type: row.type,
    createdAt: row.created_at
  }
}

const accountNotFound = (id: AccountId) => new AccountNotFound({ message: `no account with id ${quoted(id)}` })

/**
 * The `AccountStore` port over an open, migrated connection (docs/api.md section 7).
 *
 * The push path's lookups (`findAccountByKey`, `findWidgets`, and their synchronous `peekAccount`/`peekWidget`
 * for the hot paths) are better-sqlite3 statements prepared once. Admin
 * queries are built with Kysely: single statements run through Kysely; the two that need several statements to be
 * atomic (`createAccount`, `addAccessKey`) are compiled by Kysely and run in a synchronous better-sqlite3
 * transaction. A Kysely transaction would span several event-loop turns on the one shared connection, and a push's
 * synchronous transaction started meanwhile would nest into it as a savepoint and commit or roll back with it.
 * Stream names are ordered by SQLite's BINARY collation (code points). Throws when the schema is missing.
 */
export const make = (
  db: Database.Database,
  kysely: Kysely<Tables>,
  sink?: ChangeSink
): Context.Tag.Service<AccountStore> => {
  const accountByKey = db.prepare<[string], { readonly account_id: string }>(Sql.accountByKey)
  const widgetByName = db.prepare<[string, string], WidgetRow>(Sql.widgetByName)
  const widgetsByNames = db.prepare<[string, string], WidgetRow>(Sql.widgetsByNames)

  const run = (query: Compilable<unknown>) => {
    const compiled = query.compile()
    return db.prepare(compiled.sql).run(...compiled.parameters)
  }
  const exists = (query: Compilable<unknown>) => {
    const compiled = query.compile()
    return db.prepare(compiled.sql).get(...compiled.parameters) !== undefined
  }
  const accountExists = (id: AccountId) =>
    Effect.tryPromise({
      try: () => kysely.selectFrom("accounts").select("id").where("id", "=", id).executeTakeFirst(),
      catch: storageFailure
    }).pipe(Effect.map((row) => row !== undefined))

  const createAccount = db.transaction((account: Account, key: string) => {
    run(kysely.insertInto("accounts").values({ id: account.id, name: account.name, created_at: account.createdAt }))
    run(
      kysely
        .insertInto("access_keys")
        .values({ digest: key, account_id: account.id, created_at: account.createdAt, revoked_at: null })
    )
  })

  // False when the account does not exist (nothing written).
  const addAccessKey = db.transaction((id: AccountId, key: string, createdAt: number, revokeOthers: boolean) => {
    if (!exists(kysely.selectFrom("accounts").select("id").where("id", "=", id))) return false
    if (revokeOthers) {
      run(
        kysely
          .updateTable("access_keys")
          .set({ revoked_at: createdAt })
          .where("account_id", "=", id)
          .where("revoked_at", "is", null)
      )
    }
    run(
      kysely.insertInto("access_keys").values({ digest: key, account_id: id, created_at: createdAt, revoked_at: null })
    )
    return true
  })

  return {
    createAccount: (account, key) =>
      Effect.try({ try: () => createAccount.immediate(account, key), catch: storageFailure }),

    getAccount: (id) =>
      Effect.tryPromise({
        try: () => kysely.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst(),
        catch: storageFailure
      }).pipe(
        Effect.map((row) =>
          Option.map(Option.fromNullable(row), (r) => ({
            id: r.id as AccountId,
            name: r.name,
            createdAt: r.created_at
          }))
        )
      ),

    listAccounts: Effect.tryPromise({
      try: () =>
        kysely
          .selectFrom("accounts")
          .select(["id", "name", "created_at"])
          .orderBy("created_at")
          .orderBy("id")
          .execute(),
      catch: storageFailure
    }).pipe(
      Effect.map((rows) => rows.map((r): Account => ({ id: r.id as AccountId, name: r.name, createdAt: r.created_at })))
    ),

    countAccounts: Effect.tryPromise({
      try: () =>
        kysely
          .selectFrom("accounts")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .executeTakeFirstOrThrow(),
      catch: storageFailure
    }).pipe(Effect.map((row) => Number(row.n))),

    addAccessKey: (id, key, createdAt, revokeOthers) =>
      Effect.try({
        try: () => addAccessKey.immediate(id, key, createdAt, revokeOthers),
        catch: storageFailure
      }).pipe(Effect.flatMap((added) => (added ? Effect.void : Effect.fail(accountNotFound(id))))),

    findAccountByKey: (key) =>
      Effect.try({
        try: () => Option.map(Option.fromNullable(accountByKey.get(key)), (row) => row.account_id as AccountId),
        catch: storageFailure
      }),

    createWidget: (id, streamName, type, createdAt) =>
      Effect.tryPromise({
        try: () =>
          kysely
            .insertInto("streams")
            .values({ account_id: id, name: streamName, type, created_at: createdAt, last_ts: null })
            .returning(["id", "account_id", "name", "type", "created_at"])
            .executeTakeFirstOrThrow(),
        // The unique index and the foreign key decide atomically, with no check-then-insert race.
        catch: (cause) => {
          const code = sqliteCode(cause)
          if (code === "SQLITE_CONSTRAINT_UNIQUE") {
            return new Conflict({ message: `the stream name ${quoted(streamName)} is already taken` })
          }
          if (code === "SQLITE_CONSTRAINT_FOREIGNKEY") return accountNotFound(id)
          return storageFailure(cause)
        }
      }).pipe(Effect.flatMap((row) => Effect.try({ try: () => toWidget(row), catch: storageFailure }))),

    listWidgets: (id) =>
      Effect.tryPromise({
        try: () =>
          kysely
            .selectFrom("streams")
            .select(["id", "account_id", "name", "type", "created_at"])
            .where("account_id", "=", id)
            .orderBy("name")
            .execute(),
        catch: storageFailure
      }).pipe(
        Effect.flatMap((rows) => Effect.try({ try: () => rows.map(toWidget), catch: storageFailure })),
        Effect.flatMap((widgets) =>
          widgets.length > 0
            ? Effect.succeed(widgets)
            : Effect.flatMap(accountExists(id), (found) =>
                found ? Effect.succeed(widgets) : Effect.fail(accountNotFound(id))
              )
        )
      ),

    // Synchronous lookups for the hot paths (see the port): a failed read is `undefined`, and the caller's effect
    // path then reports it; a widget that is not there is `null`.
    peekAccount: (accessKey) => {
      if (accessKey === "") return undefined
      try {
        return accountByKey.get(digestAccessKey(accessKey))?.account_id as AccountId | undefined
      } catch {
        return undefined
      }
    },
    peekWidget: (id, name) => {
      try {
        const row = widgetByName.get(id, name)
        return row === undefined ? null : toWidget(row)
      } catch {
        return undefined
      }
    },

    findWidgets: (id, names) =>
      Effect.try({
        try: () => {
          const found = new Map<string, Widget>()
          if (names.length === 1) {
            const row = widgetByName.get(id, names[0]!)
            if (row !== undefined) found.set(row.name, toWidget(row))
          } else if (names.length > 1) {
            for (const row of widgetsByNames.all(id, JSON.stringify(names))) found.set(row.name, toWidget(row))
          }
          return found
        },
        catch: storageFailure
      }),

    deleteWidget: (id, streamName) =>
      Effect.tryPromise({
        // Entries go with the stream (ON DELETE CASCADE), in the same statement.
        try: () =>
          kysely
            .deleteFrom("streams")
            .where("account_id", "=", id)
            .where("name", "=", streamName)
            .returning("id")
            .execute(),
        catch: storageFailure
      }).pipe(
        Effect.flatMap((rows) =>
          rows.length > 0
            ? // Committed (autocommit, synchronous=FULL): subscribers of the stream learn that it is gone.
              Effect.sync(() => {
                sink?.committed(
                  rows.map((row) => ({ stream: row.id as StreamId, changes: [deletedChange] })),
                  undefined
                )
              })
            : Effect.flatMap(accountExists(id), (found) =>
                Effect.fail(
                  found
                    ? new StreamNotFound({
                        message: `no widget with stream name ${quoted(streamName)} in this account`
                      })
                    : accountNotFound(id)
                )
              )
        )
      )
  }
}
