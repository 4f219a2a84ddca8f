import { accountNotFound, type SharedView, type ViewStorage } from "@dashstream/core"
import { Effect, Option } from "effect"
import type pg from "pg"
import { sqlState, toStorageFailure } from "./errors.js"
import { transaction } from "./sql.js"

/**
 * The generic part of a shared view's table (docs/api.md sections 11 and 15): a table with `id`, `account_id`, `name`,
 * `view_token` (the current token's SHA-256 digest, unique), `view_token_text` (the token itself, migration 0009;
 * `NULL` for a view made before) and `created_at`, plus the kind's own columns and tables.
 */
export interface ViewTable<A extends SharedView, Change> {
  readonly table: string
  /** The select list of a row, `t` being the table (a subquery of a child table is fine). */
  readonly columns: string
  /** A selected row as the core type (`viewToken` is filled in by the caller). */
  readonly decode: (row: any) => A
  /**
   * Inserts a new view's row (`view_token` the digest, `view_token_text` the view's token) and its child rows, inside
   * the create transaction.
   */
  readonly insert: (client: pg.PoolClient, view: A, digest: string) => Promise<unknown>
  /** Applies a change inside the update transaction; `false` when the account has no such view (nothing changed). */
  readonly change: (client: pg.PoolClient, account: string, id: string, change: Change) => Promise<boolean>
}

/**
 * A {@link ViewStorage} on a `pg` pool. A write that touches several rows is one transaction; a token replacement is
 * one `UPDATE`, so from its commit on only the new digest finds the view, in every process. `create` of an unknown
 * account is `AccountNotFound` (the account's foreign key); any other foreign key failing (a referenced dashboard
 * deleted meanwhile) is a `StorageFailure` and stores nothing. Errors: `StorageUnavailable` when the server is
 * unreachable, `StorageError` otherwise.
 */
export const makeViewStorage = <A extends SharedView, Change>(
  pool: pg.Pool,
  kind: ViewTable<A, Change>
): ViewStorage<A, Change> => {
  const select = `SELECT ${kind.columns}, view_token_text FROM ${kind.table} AS t`
  const decode = (row: { view_token_text: string | null }): A => ({
    ...kind.decode(row),
    viewToken: row.view_token_text
  })
  const first = (rows: ReadonlyArray<{ view_token_text: string | null }>) =>
    Option.map(Option.fromNullable(rows[0]), decode)
  const attempt = <B>(f: () => Promise<B>) => Effect.tryPromise({ try: f, catch: toStorageFailure })
  const query = (on: pg.Pool | pg.PoolClient, where: string, values: Array<unknown>) =>
    on.query<{ view_token_text: string | null }>(`${select} WHERE ${where}`, values).then((r) => r.rows)
  const accountKey = `${kind.table}_account_id_fkey`
  return {
    create: (view, digest) =>
      Effect.tryPromise({
        try: () =>
          transaction(pool, async (client) => {
            await kind.insert(client, view, digest)
            return { commit: true, value: undefined }
          }),
        catch: (cause) =>
          sqlState(cause) === "23503" && (cause as { constraint?: string }).constraint === accountKey
            ? accountNotFound(view.accountId)
            : toStorageFailure(cause)
      }),
    list: (account) =>
      attempt(() => query(pool, "account_id = $1 ORDER BY created_at, id", [account])).pipe(
        Effect.map((rows) => rows.map(decode))
      ),
    get: (account, id) =>
      Effect.map(
        attempt(() => query(pool, "account_id = $1 AND id = $2", [account, id])),
        first
      ),
    update: (account, id, change) =>
      attempt(() =>
        transaction(pool, async (client) =>
          (await kind.change(client, account, id, change))
            ? { commit: true, value: first(await query(client, "id = $1", [id])) }
            : { commit: false, value: Option.none<A>() }
        )
      ),
    delete: (account, id) =>
      attempt(async () => {
        const result = await pool.query(`DELETE FROM ${kind.table} WHERE account_id = $1 AND id = $2`, [account, id])
        return (result.rowCount ?? 0) > 0
      }),
    setViewToken: (account, id, viewToken, digest) =>
      attempt(async () => {
        const result = await pool.query<{ view_token_text: string | null }>(
          `UPDATE ${kind.table} AS t SET view_token = $1, view_token_text = $2 WHERE account_id = $3 AND id = $4
             RETURNING ${kind.columns}, view_token_text`,
          [digest, viewToken, account, id]
        )
        return first(result.rows)
      }),
    findByViewToken: (digest) =>
      Effect.map(
        attempt(() => query(pool, "view_token = $1", [digest])),
        first
      )
  }
}
