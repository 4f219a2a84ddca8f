import type Database from "better-sqlite3"
import {
  AccountNotFound,
  type AccountId,
  type DashboardId,
  type Rotation,
  type RotationId,
  type RotationStorage
} from "@dashstream/core"
import { Effect, Option } from "effect"
import { sqliteCode, storageFailure } from "./internal/errors.js"

interface Row {
  readonly id: string
  readonly account_id: string
  readonly name: string
  readonly interval_seconds: number
  readonly created_at: number
  /** The JSON array of the rotation's dashboard ids, in position order. */
  readonly dashboard_ids: string
}

const columns = `id, account_id, name, interval_seconds, created_at,
  (SELECT json_group_array(dashboard_id ORDER BY position) FROM rotation_dashboards
    WHERE rotation_id = rotations.id) AS dashboard_ids`

const toRotation = (row: Row): Rotation => ({
  id: row.id as RotationId,
  accountId: row.account_id as AccountId,
  name: row.name,
  dashboardIds: JSON.parse(row.dashboard_ids) as ReadonlyArray<DashboardId>,
  intervalSeconds: row.interval_seconds,
  createdAt: row.created_at
})

/**
 * Rotations' storage (docs/api.md section 15; tables `rotations` and `rotation_dashboards` of migration 0006) over an
 * open, migrated connection: the `RotationStorage` part of the `DashboardStore` port. Statements are prepared once and
 * run synchronously; a write that touches both tables is one better-sqlite3 transaction (never a Kysely one, which
 * would span event-loop turns on the shared connection). A foreign key removes a deleted dashboard from every
 * rotation. SQLite errors map to `StorageUnavailable` (busy, locked, closed) or `StorageError`. Throws when the schema
 * is missing.
 */
export const make = (db: Database.Database): RotationStorage => {
  const insertRotation = db.prepare<[string, string, string, number, string, number]>(
    "INSERT INTO rotations (id, account_id, name, interval_seconds, view_token, created_at) VALUES (?, ?, ?, ?, ?, ?)"
  )
  const insertMember = db.prepare<[string, number, string]>(
    "INSERT INTO rotation_dashboards (rotation_id, position, dashboard_id) VALUES (?, ?, ?)"
  )
  const deleteMembers = db.prepare<[string]>("DELETE FROM rotation_dashboards WHERE rotation_id = ?")
  const list = db.prepare<[string], Row>(
    `SELECT ${columns} FROM rotations WHERE account_id = ? ORDER BY created_at, id`
  )
  const get = db.prepare<[string, string], Row>(`SELECT ${columns} FROM rotations WHERE account_id = ? AND id = ?`)
  const byToken = db.prepare<[string], Row>(`SELECT ${columns} FROM rotations WHERE view_token = ?`)
  const accountExists = db.prepare<[string], number>("SELECT 1 FROM accounts WHERE id = ?").pluck()
  const updateRow = db.prepare<[string, number, string, string]>(
    "UPDATE rotations SET name = ?, interval_seconds = ? WHERE account_id = ? AND id = ?"
  )
  const setToken = db.prepare<[string, string, string]>(
    "UPDATE rotations SET view_token = ? WHERE account_id = ? AND id = ?"
  )
  const remove = db.prepare<[string, string]>("DELETE FROM rotations WHERE account_id = ? AND id = ?")

  const attempt = <A>(f: () => A) => Effect.try({ try: f, catch: storageFailure })
  const one = (row: Row | undefined) => Option.map(Option.fromNullable(row), toRotation)

  const members = (id: string, dashboardIds: ReadonlyArray<string>) => {
    deleteMembers.run(id)
    dashboardIds.forEach((dashboardId, position) => insertMember.run(id, position, dashboardId))
  }
  const create = db.transaction((rotation: Rotation, viewToken: string) => {
    if (accountExists.get(rotation.accountId) === undefined) return false
    insertRotation.run(
      rotation.id,
      rotation.accountId,
      rotation.name,
      rotation.intervalSeconds,
      viewToken,
      rotation.createdAt
    )
    members(rotation.id, rotation.dashboardIds)
    return true
  })
  const update = db.transaction(
    (account: string, id: string, change: Parameters<RotationStorage["updateRotation"]>[2]) => {
      if (updateRow.run(change.name, change.intervalSeconds, account, id).changes === 0) return undefined
      members(id, change.dashboardIds)
      return get.get(account, id)
    }
  )

  return {
    createRotation: (rotation, viewToken) =>
      Effect.flatMap(
        Effect.try({
          try: () => create.immediate(rotation, viewToken),
          catch: (cause) =>
            sqliteCode(cause) === "SQLITE_CONSTRAINT_FOREIGNKEY"
              ? storageFailure(new Error("a rotation's dashboard was deleted while it was stored", { cause }))
              : storageFailure(cause)
        }),
        (created) =>
          created
            ? Effect.void
            : Effect.fail(new AccountNotFound({ message: `no account with id ${JSON.stringify(rotation.accountId)}` }))
      ),
    listRotations: (account) => attempt(() => list.all(account).map(toRotation)),
    getRotation: (account, id) => attempt(() => one(get.get(account, id))),
    updateRotation: (account, id, change) => attempt(() => one(update.immediate(account, id, change))),
    deleteRotation: (account, id) => attempt(() => remove.run(account, id).changes > 0),
    setRotationViewToken: (account, id, viewToken) =>
      attempt(() => (setToken.run(viewToken, account, id).changes === 0 ? Option.none() : one(get.get(account, id)))),
    findRotationByViewToken: (viewToken) => attempt(() => one(byToken.get(viewToken)))
  }
}
