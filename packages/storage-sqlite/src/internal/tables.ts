import type { Generated } from "kysely"

/**
 * The tables as Kysely sees them (see `migrations/0001_initial.ts`). Private to this adapter: rows are decoded into
 * core types before they leave it. Times (`created_at`, `revoked_at`, `ts`, `last_ts`) are integer microseconds.
 */
export interface Tables {
  readonly accounts: AccountsTable
  readonly access_keys: AccessKeysTable
  readonly streams: StreamsTable
  readonly entry_blocks: EntryBlocksTable
}

/** One account. */
export interface AccountsTable {
  readonly id: string
  readonly name: string
  readonly created_at: number
}

/** One access key, by its SHA-256 digest (lowercase hex); `revoked_at` is null while the key works. */
export interface AccessKeysTable {
  readonly digest: string
  readonly account_id: string
  readonly created_at: number
  readonly revoked_at: number | null
}

/** One widget and its stream. `last_ts` is the highest `ts` ever assigned in the stream (kept across clears). */
export interface StreamsTable {
  readonly id: Generated<number>
  readonly account_id: string
  readonly name: string
  readonly type: string
  readonly created_at: number
  readonly last_ts: number | null
  /** The `ts` of the last clear (migration 0002); null if never cleared. */
  readonly cleared_ts: number | null
}

/**
 * A block of a stream's entries (migration 0007): `n` entries with `first_ts` to `last_ts`, packed in `data` (see
 * `entryBlocks.js`), the last at byte offset `last_at`; `summary` (migration 0013): the entries the bucket rule keeps
 * of the block alone (core's `summarizeBlock`), `NULL` when not computed (read from `data` then).
 */
export interface EntryBlocksTable {
  readonly id: Generated<number>
  readonly stream_id: number
  readonly first_ts: number
  readonly last_ts: number
  readonly n: number
  readonly last_at: number
  readonly data: Buffer
  readonly summary: Buffer | null
}
