import type Database from "better-sqlite3"
import type { SharedView, ViewStorage, ViewTokenDigest } from "@dashstream/core"
import { Option } from "effect"
import { makeResourceStorage, type ResourceTable } from "./resourceTable.js"

/**
 * The table of one kind of shared view (docs/api.md sections 11 and 15): an account resource's table
 * ({@link ResourceTable}) with `view_token` (the current token's SHA-256 digest, unique) and `view_token_text` (the
 * token itself, migration 0008; `NULL` for a view made before). The kind's `decode` leaves `viewToken` to this module;
 * its `insert` writes both columns (the digest is given, the token is the view's).
 */
export type ViewTable<A extends SharedView, Change> = ResourceTable<A, Change, [digest: ViewTokenDigest]>

/**
 * A {@link ViewStorage} over an open, migrated connection: the resource storage of its table, and the token's
 * replacement (one `UPDATE`: from then on only the new digest finds the view) and lookup by digest.
 */
export const makeViewStorage = <A extends SharedView, Change>(
  db: Database.Database,
  kind: ViewTable<A, Change>
): ViewStorage<A, Change> => {
  const { storage, select, one, attempt, get } = makeResourceStorage(db, {
    ...kind,
    columns: `${kind.columns}, view_token_text`,
    decode: (row: { view_token_text: string | null }) => ({ ...kind.decode(row), viewToken: row.view_token_text })
  })
  const setToken = db.prepare<[string, string, string, string]>(
    `UPDATE ${kind.table} SET view_token = ?, view_token_text = ? WHERE account_id = ? AND id = ?`
  )
  const byToken = db.prepare<[string], object>(`${select} WHERE view_token = ?`)
  return {
    ...storage,
    setViewToken: (account, id, viewToken, digest) =>
      attempt(() =>
        setToken.run(digest, viewToken, account, id).changes === 0 ? Option.none() : one(get(account, id))
      ),
    findByViewToken: (digest) => attempt(() => one(byToken.get(digest)))
  }
}
