import { StorageError, type StorageFailure, StorageUnavailable } from "@dashstream/core"

/** The SQLite result code of a better-sqlite3 error (`SQLITE_BUSY`, `SQLITE_CONSTRAINT_UNIQUE`, ...), if any. */
export const sqliteCode = (cause: unknown): string | undefined => {
  const code = typeof cause === "object" && cause !== null ? (cause as { readonly code?: unknown }).code : undefined
  return typeof code === "string" ? code : undefined
}

// A locked database (another process holds the write lock past busy_timeout) or a closed connection (the layer is
// shutting down): nothing was stored and a retry may succeed.
const unavailableMessage =
  /database is locked|database table is locked|connection is not open|driver has already been destroyed/i

/** True when `cause` is SQLite's `SQLITE_BUSY` (another connection holds the lock asked for). */
export const isBusy = (cause: unknown): boolean => sqliteCode(cause)?.startsWith("SQLITE_BUSY") === true

/** True when `cause` means the database is unreachable for now rather than broken. */
export const isUnavailable = (cause: unknown): boolean => {
  const code = sqliteCode(cause)
  if (code !== undefined && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))) return true
  return cause instanceof Error && unavailableMessage.test(cause.message)
}

/** Maps a thrown SQLite or Kysely error to `StorageUnavailable` (busy, locked, closed) or `StorageError`. */
export const storageFailure = (cause: unknown): StorageFailure =>
  isUnavailable(cause) ? new StorageUnavailable({ cause }) : new StorageError({ cause })
