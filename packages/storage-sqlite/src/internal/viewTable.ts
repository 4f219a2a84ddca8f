import type Database from "better-sqlite3"
import type { AccountId, SharedView, ViewStorage } from "@dashstream/core"
import { Effect, Option } from "effect"
import { accountNotFound } from "@dashstream/core"
import { sqliteCode, storageFailure } from "./errors.js"

/**
 * The generic part of a shared view's table (docs/api.md sections 11 and 15): a table with `id`, `account_id`, `name`,
 * `view_token` (the current token's SHA-256 digest, unique), `view_token_text` (the token itself, migration 0008;
 * `null` for a view made before) and `created_at`, plus the kind's own columns and tables.
 */
export interface ViewTable<A extends SharedView, Change> {
  readonly table: string
  /** The select list of a row, `t` being the table (`json_group_array(...)` of a child table is fine). */
  readonly columns: string
  /** A selected row as the core type. */
  readonly decode: (row: any) => A
  /**
   * Inserts a new view's row (`view_token` the digest, `view_token_text` the view's token) and its child rows, inside
   * the create transaction.
   */
  readonly insert: (view: A, digest: string) => void
  /** Applies a change inside the update transaction; `false` when the account has no such view (nothing changed). */
  readonly change: (account: string, id: string, change: Change) => boolean
}

/**
 * A {@link ViewStorage} over an open, migrated connection. Statements are prepared once and run synchronously; a write
 * that touches several rows is one better-sqlite3 transaction (never a Kysely one, which would span event-loop turns
 * on the shared connection). `create` checks the account in its transaction (`AccountNotFound`); a foreign key failing
 * (a referenced dashboard deleted meanwhile) is a `StorageFailure` and stores nothing. SQLite errors map to
 * `StorageUnavailable` (busy, locked, closed) or `StorageError`. Throws when the schema is missing.
 */
export const makeViewStorage = <A extends SharedView, Change>(
  db: Database.Database,
  kind: ViewTable<A, Change>
): ViewStorage<A, Change> => {
  const select = `SELECT ${kind.columns}, view_token_text FROM ${kind.table} AS t`
  const list = db.prepare<[string], object>(`${select} WHERE account_id = ? ORDER BY created_at, id`)
  const get = db.prepare<[string, string], object>(`${select} WHERE account_id = ? AND id = ?`)
  const byToken = db.prepare<[string], object>(`${select} WHERE view_token = ?`)
  const accountExists = db.prepare<[string], number>("SELECT 1 FROM accounts WHERE id = ?").pluck()
  const setToken = db.prepare<[string, string, string, string]>(
    `UPDATE ${kind.table} SET view_token = ?, view_token_text = ? WHERE account_id = ? AND id = ?`
  )
  const remove = db.prepare<[string, string]>(`DELETE FROM ${kind.table} WHERE account_id = ? AND id = ?`)

  const decode = (row: object): A =>
    ({ ...kind.decode(row), viewToken: (row as { view_token_text: string | null }).view_token_text }) as A
  const one = (row: object | undefined) => Option.map(Option.fromNullable(row), decode)
  const attempt = <B>(f: () => B) => Effect.try({ try: f, catch: storageFailure })

  const create = db.transaction((view: A, digest: string) => {
    if (accountExists.get(view.accountId) === undefined) return false
    kind.insert(view, digest)
    return true
  })
  const update = db.transaction((account: string, id: string, change: Change) =>
    kind.change(account, id, change) ? get.get(account, id) : undefined
  )

  return {
    create: (view, digest) =>
      Effect.flatMap(
        Effect.try({
          try: () => create.immediate(view, digest),
          catch: (cause) =>
            sqliteCode(cause) === "SQLITE_CONSTRAINT_FOREIGNKEY"
              ? storageFailure(new Error(`what a new ${kind.table} row refers to was deleted meanwhile`, { cause }))
              : storageFailure(cause)
        }),
        (created) => (created ? Effect.void : Effect.fail(accountNotFound(view.accountId)))
      ),
    list: (account) => attempt(() => list.all(account).map(decode)),
    get: (account, id) => attempt(() => one(get.get(account, id))),
    update: (account, id, change) => attempt(() => one(update.immediate(account, id, change))),
    delete: (account, id) => attempt(() => remove.run(account, id).changes > 0),
    setViewToken: (account: AccountId, id, viewToken, digest) =>
      attempt(() =>
        setToken.run(digest, viewToken, account, id).changes === 0 ? Option.none() : one(get.get(account, id))
      ),
    findByViewToken: (digest) => attempt(() => one(byToken.get(digest)))
  }
}
