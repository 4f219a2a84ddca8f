import type { StorageFailure } from "@dashstream/core"
import { Effect, Runtime, Schedule } from "effect"
import { type Kysely, type Migration, Migrator } from "kysely"
import { acquire, type SqliteConfig } from "./internal/database.js"
import { storageFailure } from "./internal/errors.js"
import * as M0001 from "./migrations/0001_initial.js"
import * as M0002 from "./migrations/0002_live.js"
import * as M0003 from "./migrations/0003_dashboards.js"
import * as M0004 from "./migrations/0004_live_sequence.js"
import * as M0005 from "./migrations/0005_console_sessions.js"
import * as M0006 from "./migrations/0006_rotations.js"
import * as M0007 from "./migrations/0007_entry_blocks.js"

/**
 * Every migration, by name; applied in name order. Static (no file-system scan), so a bundled or tsx-run server
 * migrates the same way.
 */
const migrations: Readonly<Record<string, Migration>> = {
  "0001_initial": M0001,
  "0002_live": M0002,
  "0003_dashboards": M0003,
  "0004_live_sequence": M0004,
  "0005_console_sessions": M0005,
  "0006_rotations": M0006,
  "0007_entry_blocks": M0007
}

/** The names of every migration this version knows, in the order they run. */
export const migrationNames: ReadonlyArray<string> = Object.keys(migrations).sort()

/**
 * Brings the schema of an open database up to date with Kysely's `Migrator` and returns the names of the migrations
 * it applied (empty when already up to date). Fails with `StorageError`, e.g. when the database holds a migration
 * this code does not know (a newer version wrote it). A lock held by another process migrating at the same time
 * (`StorageUnavailable`) is retried a few times.
 */
export const runMigrations = (kysely: Kysely<any>): Effect.Effect<ReadonlyArray<string>, StorageFailure> =>
  Effect.runtime<never>().pipe(
    Effect.flatMap((runtime) => {
      // 0007 converts every entry (minutes on a large database): its progress is logged.
      const told: M0007.Progress = (converted, total) =>
        Runtime.runSync(runtime)(
          Effect.logInfo(`migration 0007_entry_blocks: ${converted} of ${total} entries converted into blocks`)
        )
      const all = { ...migrations, "0007_entry_blocks": { ...M0007, up: (db: Kysely<any>) => M0007.convert(db, told) } }
      return Effect.tryPromise({
        try: () =>
          new Migrator({ db: kysely, provider: { getMigrations: () => Promise.resolve(all) } }).migrateToLatest(),
        catch: storageFailure
      })
    }),
    Effect.flatMap(({ error, results }) =>
      error === undefined
        ? Effect.succeed((results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName))
        : Effect.fail(storageFailure(error))
    ),
    Effect.retry({
      while: (e) => e._tag === "StorageUnavailable",
      times: 3,
      schedule: Schedule.spaced("100 millis")
    })
  )

/**
 * Opens the database (creating the file and its directory if missing), brings its schema up to date and closes it:
 * the CLI's `dashstream migrate` (contract section 8). Succeeds with the names of the migrations applied, in order
 * (empty when the schema was already current). Fails with `StorageError` or `StorageUnavailable`.
 */
export const migrate = (config: SqliteConfig): Effect.Effect<ReadonlyArray<string>, StorageFailure> =>
  Effect.scoped(Effect.flatMap(acquire(config), ({ kysely }) => runMigrations(kysely)))
