import type { ColumnType } from "kysely"

// The tables of migrations 0001 to 0003 as Kysely sees them. BIGINT columns come back as numbers (see pool.ts).
// Private to the adapter: rows are decoded into core types at the edge.

/** `accounts`: one row per account; `created_at` in microseconds. */
export interface AccountsTable {
  readonly id: string
  readonly name: string
  readonly created_at: number
}

/** `access_keys`: SHA-256 digests of access keys; a key works while `revoked_at` is null. */
export interface AccessKeysTable {
  readonly digest: string
  readonly account_id: string
  readonly created_at: number
  readonly revoked_at: number | null
}

/** `streams`: one row per widget; `last_ts` is the highest `ts` ever assigned in the stream (kept across clears). */
export interface StreamsTable {
  readonly id: ColumnType<number, never, never>
  readonly account_id: string
  readonly name: string
  readonly type: string
  readonly created_at: number
  readonly last_ts: number | null
  /** The `ts` of the stream's last clear (microseconds), null if never cleared (migration 0002). */
  readonly cleared_ts: number | null
}

/** `entries`: the stored points, unique by `(stream_id, ts)`. */
export interface EntriesTable {
  readonly stream_id: number
  /** Integer microseconds since the UNIX epoch. */
  readonly ts: number
  /** The number decimation ranks by (`number`, or `y` for xy-graph), else null. */
  readonly value: number | null
  /** The stored point's JSON text, exactly as serialised on write. */
  readonly point: string
}

/** `dashboards` (migration 0003): `tiles` is the tiles array's JSON text, `view_token` the current token's digest. */
export interface DashboardsTable {
  readonly id: string
  readonly account_id: string
  readonly name: string
  readonly tiles: string
  readonly view_token: string
  readonly created_at: number
}

/** The database as Kysely sees it. */
export interface Tables {
  readonly accounts: AccountsTable
  readonly access_keys: AccessKeysTable
  readonly streams: StreamsTable
  readonly entries: EntriesTable
  readonly dashboards: DashboardsTable
}
