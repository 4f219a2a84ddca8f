import type { SharedView, ViewStorage, ViewTokenDigest } from "@dashstream/core"
import { Effect } from "effect"
import type pg from "pg"
import { makeResourceStorage, type ResourceTable } from "./resourceTable.js"

/**
 * The table of one kind of shared view (docs/api.md sections 11 and 15): an account resource's table
 * ({@link ResourceTable}) with `view_token` (the current token's SHA-256 digest, unique) and `view_token_text` (the
 * token itself, migration 0009; `NULL` for a view made before). The kind's `decode` leaves `viewToken` to this module;
 * its `insert` writes both columns (the digest is given, the token is the view's).
 */
export type ViewTable<A extends SharedView, Change> = ResourceTable<A, Change, [digest: ViewTokenDigest]>

/**
 * A {@link ViewStorage} on a `pg` pool: the resource storage of its table, and the token's replacement (one `UPDATE`,
 * so from its commit on only the new digest finds the view, in every process) and lookup by digest.
 */
export const makeViewStorage = <A extends SharedView, Change>(
  pool: pg.Pool,
  kind: ViewTable<A, Change>
): ViewStorage<A, Change> => {
  const columns = `${kind.columns}, view_token_text`
  const { storage, first, attempt, query } = makeResourceStorage(pool, {
    ...kind,
    columns,
    decode: (row: { view_token_text: string | null }) => ({ ...kind.decode(row), viewToken: row.view_token_text })
  })
  return {
    ...storage,
    setViewToken: (account, id, viewToken, digest) =>
      Effect.map(
        attempt(() =>
          pool
            .query(
              `UPDATE ${kind.table} AS t SET view_token = $1, view_token_text = $2 WHERE account_id = $3 AND id = $4
                 RETURNING ${columns}`,
              [digest, viewToken, account, id]
            )
            .then((r) => r.rows)
        ),
        first
      ),
    findByViewToken: (digest) =>
      Effect.map(
        attempt(() => query(pool, "view_token = $1", [digest])),
        first
      )
  }
}
