import {
  AccountNotFound,
  type AccountId,
  type Dashboard,
  type DashboardId,
  type DashboardStore,
  type RotationStorage,
  type Tile
} from "@dashstream/core"
import { Effect, Option } from "effect"
import type pg from "pg"
import { affected, db, run } from "./internal/sql.js"
import { sqlState, toStorageFailure } from "./internal/errors.js"

const columns = ["id", "account_id", "name", "tiles", "created_at"] as const

interface Row {
  readonly id: string
  readonly account_id: string
  readonly name: string
  readonly tiles: string
  readonly created_at: number
}

// Tiles were validated before they were stored: the JSON text is read back as is.
const toDashboard = (row: Row): Dashboard => ({
  id: row.id as DashboardId,
  accountId: row.account_id as AccountId,
  name: row.name,
  tiles: JSON.parse(row.tiles) as ReadonlyArray<Tile>,
  createdAt: row.created_at
})

/**
 * The `DashboardStore` port on a `pg` pool (docs/api.md section 11; table `dashboards` of migration 0003). Each method
 * is one statement (atomic on its own, no transaction needed); rotation is one `UPDATE`, so from its commit on only
 * the new digest finds the dashboard, in every process. Tiles are stored as JSON text. A foreign key ties a dashboard
 * to its account (`AccountNotFound` on create); none ties tiles to streams. Errors: `StorageUnavailable` when the
 * server is unreachable, `StorageError` otherwise. Rotations, the rest of the port, are `PostgresRotationStore`'s; a
 * deleted dashboard leaves them by a foreign key.
 */
export const makeDashboardStore = (pool: pg.Pool): Omit<DashboardStore["Type"], keyof RotationStorage> => {
  const attempt = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: toStorageFailure })
  const first = (rows: ReadonlyArray<Row>) => Option.map(Option.fromNullable(rows[0]), toDashboard)
  return {
    create: (dashboard, viewToken) =>
      Effect.tryPromise({
        try: () =>
          run(
            pool,
            db
              .insertInto("dashboards")
              .values({
                id: dashboard.id,
                account_id: dashboard.accountId,
                name: dashboard.name,
                tiles: JSON.stringify(dashboard.tiles),
                view_token: viewToken,
                created_at: dashboard.createdAt
              })
              .compile()
          ),
        catch: (cause) =>
          sqlState(cause) === "23503"
            ? new AccountNotFound({ message: `no account with id ${JSON.stringify(dashboard.accountId)}` })
            : toStorageFailure(cause)
      }).pipe(Effect.asVoid),

    list: (account) =>
      attempt(() =>
        run(
          pool,
          db
            .selectFrom("dashboards")
            .select(columns)
            .where("account_id", "=", account)
            .orderBy("created_at")
            .orderBy("id")
            .compile()
        )
      ).pipe(Effect.map((rows) => rows.map(toDashboard))),

    get: (account, id) =>
      attempt(() =>
        run(
          pool,
          db.selectFrom("dashboards").select(columns).where("account_id", "=", account).where("id", "=", id).compile()
        )
      ).pipe(Effect.map(first)),

    update: (account, id, name, tiles) =>
      attempt(() =>
        run(
          pool,
          db
            .updateTable("dashboards")
            .set({ name, tiles: JSON.stringify(tiles) })
            .where("account_id", "=", account)
            .where("id", "=", id)
            .returning(columns)
            .compile()
        )
      ).pipe(Effect.map(first)),

    delete: (account, id) =>
      attempt(() =>
        affected(pool, db.deleteFrom("dashboards").where("account_id", "=", account).where("id", "=", id).compile())
      ).pipe(Effect.map((n) => n > 0)),

    setViewToken: (account, id, viewToken) =>
      attempt(() =>
        run(
          pool,
          db
            .updateTable("dashboards")
            .set({ view_token: viewToken })
            .where("account_id", "=", account)
            .where("id", "=", id)
            .returning(columns)
            .compile()
        )
      ).pipe(Effect.map(first)),

    findByViewToken: (viewToken) =>
      attempt(() =>
        run(pool, db.selectFrom("dashboards").select(columns).where("view_token", "=", viewToken).compile())
      ).pipe(Effect.map(first))
  }
}
