import { type StorageFailure, StorageError, StorageUnavailable } from "@dashstream/core"

// Node socket errors that mean the server cannot be reached or the connection broke.
const networkCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTFOUND",
  "EAI_AGAIN"
])

// SQLSTATEs after which nothing was stored and a retry may succeed once the server is back.
const unavailableStates = new Set([
  "57P01", // admin_shutdown (also pg_terminate_backend)
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, shutting down, recovery)
  "57P05", // idle_session_timeout
  "57014", // query_canceled: statement_timeout hit, the database is overloaded
  "53300", // too_many_connections
  "25P03" // idle_in_transaction_session_timeout
])

// Errors `pg` and `pg-pool` raise without a code.
const unavailableMessages =
  /connection terminated|timeout exceeded when trying to connect|not queryable|cannot use a pool after calling end|client was closed|connection is closed|server closed the connection/i

const isUnavailable = (error: unknown, depth: number): boolean => {
  if (typeof error !== "object" || error === null || depth > 5) return false
  const e = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown }
  if (typeof e.code === "string") {
    if (networkCodes.has(e.code) || unavailableStates.has(e.code) || /^08[0-9A-Z]{3}$/.test(e.code)) return true
  }
  if (typeof e.message === "string" && unavailableMessages.test(e.message)) return true
  // Node's happy-eyeballs connect reports an AggregateError of one error per address tried.
  if (Array.isArray(e.errors) && e.errors.some((inner) => isUnavailable(inner, depth + 1))) return true
  return isUnavailable(e.cause, depth + 1)
}

/**
 * Maps an error thrown by `pg` to the storage failure of the ports: `StorageUnavailable` when the server is
 * unreachable, shutting down, refusing connections, or the connection broke (nothing was acknowledged and a retry
 * may succeed), `StorageError` for anything else (a bug or a constraint the adapter did not expect).
 */
export const toStorageFailure = (cause: unknown): StorageFailure =>
  isUnavailable(cause, 0) ? new StorageUnavailable({ cause }) : new StorageError({ cause })

/** The SQLSTATE of a `pg` error, if it has one. */
export const sqlState = (error: unknown): string | undefined => {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined
  return typeof code === "string" ? code : undefined
}
