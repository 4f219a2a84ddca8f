import type { ColumnType } from "kysely"

// The tables of the migrations as Kysely sees them. BIGINT columns come back as numbers (see pool.ts).
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

/**
 * `entry_blocks` (migration 0007): the stored points, up to 32 entries (or 16 KiB) of one stream a row, keyed by
 * `(stream_id, first_ts)`; the blocks of a stream hold disjoint `ts` ranges (integer microseconds).
 */
export interface EntryBlocksTable {
  readonly stream_id: number
  readonly first_ts: number
  readonly last_ts: number
  /** The number of entries in `data`. */
  readonly n: number
  /** The byte offset of the last entry in `data`. */
  readonly last_at: number
  /** The entries, packed (`@dashstream/core/entryBlocks`): `ts`, decimation value, JSON length and text each. */
  readonly data: Buffer
  /**
   * What the bucket rule keeps of the block alone (migration 0014, core's `summarizeBlock`), packed as `data`; NULL
   * when not computed (a block of at most 4 entries): a range read then reads `data`.
   */
  readonly summary: Buffer | null
}

/** The database as Kysely sees it. */
export interface Tables {
  readonly accounts: AccountsTable
  readonly access_keys: AccessKeysTable
  readonly streams: StreamsTable
  readonly entry_blocks: EntryBlocksTable
}
