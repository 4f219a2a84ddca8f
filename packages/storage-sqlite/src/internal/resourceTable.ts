import type Database from "better-sqlite3"
import { type AccountResource, accountNotFound, type ResourceStorage, type StorageFailure } from "@dashstream/core"
import { Effect, Option } from "effect"
import { sqliteCode, storageFailure } from "./errors.js"

/**
 * The table of one kind of account resource (`AccountResource.ts` in core): `id`, `account_id` (a foreign key to
 * `accounts`), `name`, `created_at` and the kind's own columns and child tables. A kind says how to select, decode,
 * insert and change its rows; {@link makeResourceStorage} does the rest.
 */
export interface ResourceTable<A extends AccountResource, Change, Extra extends ReadonlyArray<unknown>> {
  readonly table: string
  /** The select list of a row, `t` being the table (`json_group_array(...)` of a child table is fine). */
  readonly columns: string
  /** A selected row as the core type. */
  readonly decode: (row: any) => A
  /** Inserts a new resource's row and its child rows, inside the create transaction. */
  readonly insert: (resource: A, ...extra: Extra) => void
  /** Applies a change inside the update transaction; `false` when the account has no such resource (nothing changed). */
  readonly change: (account: string, id: string, change: Change) => boolean
}

/** What {@link makeResourceStorage} gives: the storage, and the pieces a kind's other statements reuse. */
export interface ResourceStatements<A extends AccountResource, Change, Extra extends ReadonlyArray<unknown>> {
  readonly storage: ResourceStorage<A, Change, Extra>
  /** `SELECT <columns> FROM <table> AS t`, to add a `WHERE` to. */
  readonly select: string
  /** A selected row (or none) as the core type. */
  readonly one: (row: object | undefined) => Option.Option<A>
  /** Runs a synchronous statement, its error mapped to a `StorageFailure`. */
  readonly attempt: <B>(f: () => B) => Effect.Effect<B, StorageFailure>
  /** The row of one resource of the account. */
  readonly get: (account: string, id: string) => object | undefined
}

/**
 * A {@link ResourceStorage} over an open, migrated connection, and the statements its kind's others may reuse. Statements are prepared once and run synchronously; a write that touches several rows is one better-sqlite3
 * transaction (never a Kysely one, which would span event-loop turns on the shared connection). `create` checks the
 * account in its transaction (`AccountNotFound`); a foreign key failing (a referenced row deleted meanwhile) is a
 * `StorageFailure` and stores nothing. SQLite errors map to `StorageUnavailable` (busy, locked, closed) or
 * `StorageError`. Throws when the schema is missing.
 */
export const makeResourceStorage = <A extends AccountResource, Change, Extra extends ReadonlyArray<unknown>>(
  db: Database.Database,
  kind: ResourceTable<A, Change, Extra>
): ResourceStatements<A, Change, Extra> => {
  const select = `SELECT ${kind.columns} FROM ${kind.table} AS t`
  const list = db.prepare<[string], object>(`${select} WHERE account_id = ? ORDER BY created_at, id`)
  const get = db.prepare<[string, string], object>(`${select} WHERE account_id = ? AND id = ?`)
  const accountExists = db.prepare<[string], number>("SELECT 1 FROM accounts WHERE id = ?").pluck()
  const remove = db.prepare<[string, string]>(`DELETE FROM ${kind.table} WHERE account_id = ? AND id = ?`)

  const one = (row: object | undefined) => Option.map(Option.fromNullable(row), kind.decode)
  const attempt = <B>(f: () => B) => Effect.try({ try: f, catch: storageFailure })

  const create = db.transaction((resource: A, extra: Extra) => {
    if (accountExists.get(resource.accountId) === undefined) return false
    kind.insert(resource, ...extra)
    return true
  })
  const update = db.transaction((account: string, id: string, change: Change) =>
    kind.change(account, id, change) ? get.get(account, id) : undefined
  )

  const storage: ResourceStorage<A, Change, Extra> = {
    create: (resource, ...extra) =>
      Effect.flatMap(
        Effect.try({
          try: () => create.immediate(resource, extra),
          catch: (cause) =>
            sqliteCode(cause) === "SQLITE_CONSTRAINT_FOREIGNKEY"
              ? storageFailure(new Error(`what a new ${kind.table} row refers to was deleted meanwhile`, { cause }))
              : storageFailure(cause)
        }),
        (created) => (created ? Effect.void : Effect.fail(accountNotFound(resource.accountId)))
      ),
    list: (account) => attempt(() => list.all(account).map(kind.decode)),
    get: (account, id) => attempt(() => one(get.get(account, id))),
    update: (account, id, change) => attempt(() => one(update.immediate(account, id, change))),
    delete: (account, id) => attempt(() => remove.run(account, id).changes > 0)
  }
  return { storage, select, one, attempt, get: (account, id) => get.get(account, id) }
}
