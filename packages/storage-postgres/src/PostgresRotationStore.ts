import {
  AccountNotFound,
  type AccountId,
  type DashboardId,
  type Rotation,
  type RotationId,
  type RotationStorage
} from "@dashstream/core"
import { Effect, Option } from "effect"
import type pg from "pg"
import { sqlState, toStorageFailure } from "./internal/errors.js"
import { transaction } from "./internal/sql.js"

interface Row {
  readonly id: string
  readonly account_id: string
  readonly name: string
  readonly interval_seconds: number
  readonly created_at: number
  /** The JSON text of the rotation's dashboard ids, in position order. */
  readonly dashboard_ids: string
}

const columns = `id, account_id, name, interval_seconds, created_at,
  coalesce((SELECT json_agg(dashboard_id ORDER BY position) FROM rotation_dashboards
    WHERE rotation_id = rotations.id), '[]')::text AS dashboard_ids`

const toRotation = (row: Row): Rotation => ({
  id: row.id as RotationId,
  accountId: row.account_id as AccountId,
  name: row.name,
  dashboardIds: JSON.parse(row.dashboard_ids) as ReadonlyArray<DashboardId>,
  intervalSeconds: row.interval_seconds,
  createdAt: Number(row.created_at)
})

const first = (rows: ReadonlyArray<Row>) => Option.map(Option.fromNullable(rows[0]), toRotation)

// The dashboards of a rotation in one statement: positions 0, 1, ... in the order given.
const insertMembers = (client: pg.PoolClient, id: string, dashboardIds: ReadonlyArray<string>) =>
  dashboardIds.length === 0
    ? Promise.resolve()
    : client.query(
        `INSERT INTO rotation_dashboards (rotation_id, position, dashboard_id)
           SELECT $1, p - 1, d FROM unnest($2::text[]) WITH ORDINALITY AS m(d, p)`,
        [id, dashboardIds]
      )

/**
 * Rotations' storage (docs/api.md section 15; tables `rotations` and `rotation_dashboards` of migration 0005) on a `pg`
 * pool: the `RotationStorage` part of the `DashboardStore` port. A write that touches both tables is one transaction;
 * token rotation is one `UPDATE`, so from its commit on only the new digest finds the rotation, in every process. A
 * foreign key removes a deleted dashboard from every rotation. Errors: `AccountNotFound` on create for an unknown
 * account, `StorageUnavailable` when the server is unreachable, `StorageError` otherwise.
 */
export const makeRotationStorage = (pool: pg.Pool): RotationStorage => {
  const attempt = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: toStorageFailure })
  const select = (where: string, values: Array<unknown>) =>
    attempt(async () => (await pool.query<Row>(`SELECT ${columns} FROM rotations WHERE ${where}`, values)).rows)
  return {
    createRotation: (rotation, viewToken) =>
      Effect.tryPromise({
        try: () =>
          transaction(pool, async (client) => {
            await client.query(
              `INSERT INTO rotations (id, account_id, name, interval_seconds, view_token, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6)`,
              [rotation.id, rotation.accountId, rotation.name, rotation.intervalSeconds, viewToken, rotation.createdAt]
            )
            await insertMembers(client, rotation.id, rotation.dashboardIds)
            return { commit: true, value: undefined }
          }),
        catch: (cause) =>
          sqlState(cause) === "23503" && (cause as { constraint?: string }).constraint === "rotations_account_id_fkey"
            ? new AccountNotFound({ message: `no account with id ${JSON.stringify(rotation.accountId)}` })
            : toStorageFailure(cause)
      }),

    listRotations: (account) =>
      Effect.map(select("account_id = $1 ORDER BY created_at, id", [account]), (rows) => rows.map(toRotation)),

    getRotation: (account, id) => Effect.map(select("account_id = $1 AND id = $2", [account, id]), first),

    updateRotation: (account, id, change) =>
      attempt(() =>
        transaction(pool, async (client) => {
          const updated = await client.query(
            "UPDATE rotations SET name = $1, interval_seconds = $2 WHERE account_id = $3 AND id = $4",
            [change.name, change.intervalSeconds, account, id]
          )
          if (updated.rowCount === 0) return { commit: false, value: Option.none<Rotation>() }
          await client.query("DELETE FROM rotation_dashboards WHERE rotation_id = $1", [id])
          await insertMembers(client, id, change.dashboardIds)
          const rows = await client.query<Row>(`SELECT ${columns} FROM rotations WHERE id = $1`, [id])
          return { commit: true, value: first(rows.rows) }
        })
      ),

    deleteRotation: (account, id) =>
      attempt(async () => {
        const result = await pool.query("DELETE FROM rotations WHERE account_id = $1 AND id = $2", [account, id])
        return (result.rowCount ?? 0) > 0
      }),

    setRotationViewToken: (account, id, viewToken) =>
      attempt(async () => {
        const result = await pool.query<Row>(
          `UPDATE rotations SET view_token = $1 WHERE account_id = $2 AND id = $3 RETURNING ${columns}`,
          [viewToken, account, id]
        )
        return first(result.rows)
      }),

    findRotationByViewToken: (viewToken) => Effect.map(select("view_token = $1", [viewToken]), first)
  }
}
