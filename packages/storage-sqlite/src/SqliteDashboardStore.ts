import {
  AccountNotFound,
  type AccountId,
  type Dashboard,
  type DashboardId,
  type DashboardStore,
  type RotationStorage,
  type Tile
} from "@dashstream/core"
import { type Context, Effect, Option } from "effect"
import type { Kysely, Selectable } from "kysely"
import { sqliteCode, storageFailure } from "./internal/errors.js"
import type { DashboardsTable, Tables } from "./internal/tables.js"

const columns = ["id", "account_id", "name", "tiles", "created_at"] as const

type Row = Pick<Selectable<DashboardsTable>, (typeof columns)[number]>

// Tiles were validated before they were stored: the JSON text is read back as is.
const toDashboard = (row: Row): Dashboard => ({
  id: row.id as DashboardId,
  accountId: row.account_id as AccountId,
  name: row.name,
  tiles: JSON.parse(row.tiles) as ReadonlyArray<Tile>,
  createdAt: row.created_at
})

/**
 * The `DashboardStore` port over an open, migrated connection (docs/api.md section 11; table `dashboards` of migration
 * 0003). Each method is one Kysely statement (atomic on its own), so nothing here needs a transaction. Tiles are
 * stored as JSON text. A foreign key ties a dashboard to its account (`AccountNotFound` on create); none ties tiles
 * to streams. SQLite errors map to `StorageUnavailable` (busy, locked, closed) or `StorageError`. Rotations, the rest
 * of the port, are `SqliteRotationStore`'s; a deleted dashboard leaves them by a foreign key.
 */
export const make = (kysely: Kysely<Tables>): Omit<Context.Tag.Service<DashboardStore>, keyof RotationStorage> => {
  const attempt = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: storageFailure })
  const one = (rows: Promise<Row | undefined>) =>
    attempt(() => rows).pipe(Effect.map((row) => Option.map(Option.fromNullable(row), toDashboard)))
  return {
    create: (dashboard, viewToken) =>
      Effect.tryPromise({
        try: () =>
          kysely
            .insertInto("dashboards")
            .values({
              id: dashboard.id,
              account_id: dashboard.accountId,
              name: dashboard.name,
              tiles: JSON.stringify(dashboard.tiles),
              view_token: viewToken,
              created_at: dashboard.createdAt
            })
            .execute(),
        catch: (cause) =>
          sqliteCode(cause) === "SQLITE_CONSTRAINT_FOREIGNKEY"
            ? new AccountNotFound({ message: `no account with id ${JSON.stringify(dashboard.accountId)}` })
            : storageFailure(cause)
      }).pipe(Effect.asVoid),

    list: (account) =>
      attempt(() =>
        kysely
          .selectFrom("dashboards")
          .select(columns)
          .where("account_id", "=", account)
          .orderBy("created_at")
          .orderBy("id")
          .execute()
      ).pipe(Effect.map((rows) => rows.map(toDashboard))),

    get: (account, id) =>
      one(
        kysely
          .selectFrom("dashboards")
          .select(columns)
          .where("account_id", "=", account)
          .where("id", "=", id)
          .executeTakeFirst()
      ),

    update: (account, id, name, tiles) =>
      one(
        kysely
          .updateTable("dashboards")
          .set({ name, tiles: JSON.stringify(tiles) })
          .where("account_id", "=", account)
          .where("id", "=", id)
          .returning(columns)
          .executeTakeFirst()
      ),

    delete: (account, id) =>
      attempt(() =>
        kysely.deleteFrom("dashboards").where("account_id", "=", account).where("id", "=", id).executeTakeFirst()
      ).pipe(Effect.map((result) => result.numDeletedRows > 0n)),

    setViewToken: (account, id, viewToken) =>
      one(
        kysely
          .updateTable("dashboards")
          .set({ view_token: viewToken })
          .where("account_id", "=", account)
          .where("id", "=", id)
          .returning(columns)
          .executeTakeFirst()
      ),

    findByViewToken: (viewToken) =>
      one(kysely.selectFrom("dashboards").select(columns).where("view_token", "=", viewToken).executeTakeFirst())
  }
}
