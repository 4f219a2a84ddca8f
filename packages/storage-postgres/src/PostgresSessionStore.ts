import type { SessionStore } from "@dashstream/core"
import { Effect } from "effect"
import type pg from "pg"
import { toStorageFailure } from "./internal/errors.js"

/**
 * Records a sign-out (`$1` the session id, `$2` its expiry) and deletes the records that expired before `$3`, in one
 * statement (one commit). The session itself is kept out of the deletion: a row the same statement deletes cannot
 * also be the conflict target of its insert. A session signed out twice keeps the later expiry.
 */
const endStatement = `with purged as (delete from ended_sessions where expires_at < $3 and id <> $1)
  insert into ended_sessions (id, expires_at) values ($1, $2)
  on conflict (id) do update set expires_at = greatest(ended_sessions.expires_at, excluded.expires_at)`

const findStatement = "select 1 from ended_sessions where id = $1"

/**
 * The `SessionStore` port on a `pg` pool (docs/api.md section 14; table `ended_sessions` of migration 0004): what every
 * process on the database consults before it trusts a signed console session. Each method is one statement.
 * Errors: `StorageUnavailable` when the server is unreachable, `StorageError` otherwise.
 */
export const makeSessionStore = (pool: pg.Pool): SessionStore["Type"] => ({
  endSession: (id, expiresAt, now) =>
    Effect.tryPromise({
      try: () => pool.query(endStatement, [id, expiresAt, now]),
      catch: toStorageFailure
    }).pipe(Effect.asVoid),
  isSessionEnded: (id) =>
    Effect.tryPromise({
      try: () => pool.query(findStatement, [id]),
      catch: toStorageFailure
    }).pipe(Effect.map((result) => result.rows.length > 0))
})
