import { type AccountResource, accountNotFound, type ResourceStorage, type StorageFailure } from "@dashstream/core"
import { Effect, Option } from "effect"
import type pg from "pg"
import { sqlState, toStorageFailure } from "./errors.js"
import { transaction } from "./sql.js"

/**
 * The table of one kind of account resource (`AccountResource.ts` in core): `id`, `account_id` (a foreign key to
 * `accounts` named `<table>_account_id_fkey`), `name`, `created_at` and the kind's own columns and child tables. A
 * kind says how to select, decode, insert and change its rows; {@link makeResourceStorage} does the rest.
 */
export interface ResourceTable<A extends AccountResource, Change, Extra extends ReadonlyArray<unknown>> {
  readonly table: string
  /** The select list of a row, `t` being the table (a subquery of a child table is fine). */
  readonly columns: string
  /** A selected row as the core type. */
  readonly decode: (row: any) => A
  /** Inserts a new resource's row and its child rows, inside the create transaction. */
  readonly insert: (client: pg.PoolClient, resource: A, ...extra: Extra) => Promise<unknown>
  /** Applies a change inside the update transaction; `false` when the account has no such resource (nothing changed). */
  readonly change: (client: pg.PoolClient, account: string, id: string, change: Change) => Promise<boolean>
}

/** What {@link makeResourceStorage} gives: the storage, and the pieces a kind's other statements reuse. */
export interface ResourceStatements<A extends AccountResource, Change, Extra extends ReadonlyArray<unknown>> {
  readonly storage: ResourceStorage<A, Change, Extra>
  /** The first of selected rows (or none) as the core type. */
  readonly first: (rows: ReadonlyArray<unknown>) => Option.Option<A>
  /** Runs a query, its error mapped to a `StorageFailure`. */
  readonly attempt: <B>(f: () => Promise<B>) => Effect.Effect<B, StorageFailure>
  /** The rows of `SELECT <columns> FROM <table> AS t WHERE <where>`. */
  readonly query: (
    on: pg.Pool | pg.PoolClient,
    where: string,
    values: Array<unknown>
  ) => Promise<ReadonlyArray<unknown>>
}

/**
 * A {@link ResourceStorage} on a `pg` pool, and the helpers its kind's other statements may reuse. A write that
 * touches several rows is one transaction. `create` of an unknown account is `AccountNotFound` (the account's foreign
 * key); any other foreign key failing (a referenced row deleted meanwhile) is a `StorageFailure` and stores nothing.
 * Errors: `StorageUnavailable` when the server is unreachable, `StorageError` otherwise.
 */
export const makeResourceStorage = <A extends AccountResource, Change, Extra extends ReadonlyArray<unknown>>(
  pool: pg.Pool,
  kind: ResourceTable<A, Change, Extra>
): ResourceStatements<A, Change, Extra> => {
  const first = (rows: ReadonlyArray<unknown>) => Option.map(Option.fromNullable(rows[0]), kind.decode)
  const attempt = <B>(f: () => Promise<B>) => Effect.tryPromise({ try: f, catch: toStorageFailure })
  const query = (on: pg.Pool | pg.PoolClient, where: string, values: Array<unknown>) =>
    on.query(`SELECT ${kind.columns} FROM ${kind.table} AS t WHERE ${where}`, values).then((r) => r.rows)
  const accountKey = `${kind.table}_account_id_fkey`
  const storage: ResourceStorage<A, Change, Extra> = {
    create: (resource, ...extra) =>
      Effect.tryPromise({
        try: () =>
          transaction(pool, async (client) => {
            await kind.insert(client, resource, ...extra)
            return { commit: true, value: undefined }
          }),
        catch: (cause) =>
          sqlState(cause) === "23503" && (cause as { constraint?: string }).constraint === accountKey
            ? accountNotFound(resource.accountId)
            : toStorageFailure(cause)
      }),
    list: (account) =>
      Effect.map(
        attempt(() => query(pool, "account_id = $1 ORDER BY created_at, id", [account])),
        (rows) => rows.map(kind.decode)
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
      })
  }
  return { storage, first, attempt, query }
}
