import type Database from "better-sqlite3"
import type { SessionStore } from "@dashstream/core"
import { type Context, Effect } from "effect"
import { storageFailure } from "./internal/errors.js"

/**
 * The `SessionStore` port over an open, migrated connection (docs/api.md section 14; table `ended_sessions` of migration
 * 0005). Statements are prepared once and run synchronously, each atomic on its own; the deletion of expired records
 * and the insertion of a sign-out run in one transaction so that a sign-out is one commit. SQLite errors map to
 * `StorageUnavailable` (busy, locked, closed) or `StorageError`. Throws when the schema is missing.
 */
export const make = (db: Database.Database): Context.Tag.Service<SessionStore> => {
  const purge = db.prepare<[number]>("DELETE FROM ended_sessions WHERE expires_at < ?")
  // A session signed out twice keeps the later expiry (both name the same session, so they are equal in practice).
  const insert = db.prepare<[string, number]>(
    "INSERT INTO ended_sessions (id, expires_at) VALUES (?, ?) " +
      "ON CONFLICT (id) DO UPDATE SET expires_at = max(expires_at, excluded.expires_at)"
  )
  const find = db.prepare<[string], number>("SELECT 1 FROM ended_sessions WHERE id = ?").pluck()
  const end = db.transaction((id: string, expiresAt: number, now: number) => {
    purge.run(now)
    insert.run(id, expiresAt)
  })
  return {
    endSession: (id, expiresAt, now) =>
      Effect.try({ try: () => end.immediate(id, expiresAt, now), catch: storageFailure }),
    isSessionEnded: (id) => Effect.try({ try: () => find.get(id) !== undefined, catch: storageFailure })
  }
}
