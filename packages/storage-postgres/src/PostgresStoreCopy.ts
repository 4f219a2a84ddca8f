import {
  alertCopyTables,
  type AlertRowRecord,
  type AccessKeyRecord,
  type AccountRecord,
  type CopySource,
  type CopyTarget,
  type DashboardRecord,
  type EntryRecord,
  type Micros,
  type RotationRecord,
  schemaProblem,
  SourceRefused,
  type StorageFailure,
  type StoreCopy,
  type StoreCounts,
  type StreamId,
  type StreamRecord
} from "@dashstream/core"
import { type Context, Effect, type Scope } from "effect"
import type pg from "pg"
import { blocksAfterSql, entriesSince } from "./internal/blockReads.js"
import { toStorageFailure } from "./internal/errors.js"
import { makePool } from "./internal/pool.js"
import { blockArrays, pushBlocks } from "./internal/changePlan.js"
import { insertBlocksQuery } from "./internal/storeSql.js"
import { migrate, migrations } from "./Migrate.js"
import type { PostgresConfig } from "./PostgresConfig.js"

// Below every valid key: stream ids start at 1, `ts` at 0 (or slightly below, for clients' own timestamps).
const NO_LOWER_BOUND = Number.MIN_SAFE_INTEGER

const query = <R extends pg.QueryResultRow>(
  client: pg.PoolClient,
  text: string,
  values: ReadonlyArray<unknown> = []
): Effect.Effect<Array<R>, StorageFailure> =>
  Effect.tryPromise({
    try: async () => (await client.query<R>(text, values as Array<unknown>)).rows,
    catch: toStorageFailure
  })

const countsSql = `SELECT (SELECT count(*) FROM accounts) AS accounts, (SELECT count(*) FROM access_keys) AS "accessKeys",
  (SELECT count(*) FROM streams) AS widgets, (SELECT count(*) FROM dashboards) AS dashboards,
  (SELECT count(*) FROM rotations) AS rotations`

// The rows of each alert table (names from core's fixed list, never from input), as integers.
const alertCountsSql = `SELECT ${alertCopyTables
  .map(({ table }) => `(SELECT count(*)::integer FROM ${table}) AS ${table}`)
  .join(", ")}`

const alertOrder = new Map<string, string>(alertCopyTables.map(({ table, order }) => [table, order]))

const source = (client: pg.PoolClient): CopySource => ({
  counts: Effect.gen(function* () {
    const [row] = yield* query<{
      accounts: number
      accessKeys: number
      widgets: number
      dashboards: number
      rotations: number
    }>(client, countsSql)
    const rows = yield* query<{ stream_id: number; n: number }>(
      client,
      "SELECT stream_id, sum(n)::bigint AS n FROM entry_blocks GROUP BY stream_id"
    )
    const entries = new Map<StreamId, number>()
    for (const r of rows) entries.set(r.stream_id as StreamId, r.n)
    const [alerts] = yield* query<Record<string, number>>(client, alertCountsSql)
    return {
      accounts: row!.accounts,
      accessKeys: row!.accessKeys,
      widgets: row!.widgets,
      dashboards: row!.dashboards,
      rotations: row!.rotations,
      alertRows: alerts as unknown as StoreCounts["alertRows"],
      entries
    } satisfies StoreCounts
  }),
  accounts: (after, limit) =>
    query<AccountRecord & pg.QueryResultRow>(
      client,
      `SELECT id, name, created_at AS "createdAt" FROM accounts WHERE id > $1 ORDER BY id LIMIT $2`,
      [after ?? "", limit]
    ),
  accessKeys: (after, limit) =>
    query<AccessKeyRecord & pg.QueryResultRow>(
      client,
      `SELECT digest, account_id AS "accountId", created_at AS "createdAt", revoked_at AS "revokedAt"
         FROM access_keys WHERE digest > $1 ORDER BY digest LIMIT $2`,
      [after ?? "", limit]
    ),
  streams: (after, limit) =>
    query<StreamRecord & pg.QueryResultRow>(
      client,
      `SELECT id, account_id AS "accountId", name, type, created_at AS "createdAt", last_ts AS "lastTs",
         cleared_ts AS "clearedTs" FROM streams WHERE id > $1 ORDER BY id LIMIT $2`,
      [after ?? NO_LOWER_BOUND, limit]
    ),
  dashboards: (after, limit) =>
    query<DashboardRecord & pg.QueryResultRow>(
      client,
      `SELECT id, account_id AS "accountId", name, tiles, view_token AS "viewToken",
         view_token_text AS "viewTokenText", created_at AS "createdAt" FROM dashboards WHERE id > $1 ORDER BY id LIMIT $2`,
      [after ?? "", limit]
    ),
  rotations: (after, limit) =>
    Effect.map(
      query<Omit<RotationRecord, "dashboardIds"> & { dashboardIds: string } & pg.QueryResultRow>(
        client,
        `SELECT id, account_id AS "accountId", name, interval_seconds AS "intervalSeconds", view_token AS "viewToken",
           view_token_text AS "viewTokenText", created_at AS "createdAt",
           coalesce((SELECT json_agg(dashboard_id ORDER BY position) FROM rotation_dashboards
             WHERE rotation_id = rotations.id), '[]')::text AS "dashboardIds"
           FROM rotations WHERE id > $1 ORDER BY id LIMIT $2`,
        [after ?? "", limit]
      ),
      (rows) => rows.map((r) => ({ ...r, dashboardIds: JSON.parse(r.dashboardIds) as RotationRecord["dashboardIds"] }))
    ),
  entries: (stream, after, limit) => {
    const from = after ?? NO_LOWER_BOUND
    return Effect.map(
      query<{ data: Buffer } & pg.QueryResultRow>(client, blocksAfterSql("$1", "$2", "$3::bigint"), [
        stream,
        from,
        limit
      ]),
      (rows) =>
        entriesSince(
          rows.map((r) => r.data),
          from,
          limit,
          (e): EntryRecord => ({ ts: e.ts as Micros, value: e.value, point: e.json })
        )
    )
  },
  alertRows: (table, offset, limit) =>
    query<AlertRowRecord & pg.QueryResultRow>(
      client,
      `SELECT * FROM ${table} ORDER BY ${alertOrder.get(table)!} OFFSET $1 LIMIT $2`,
      [offset, limit]
    )
})

// Each insert is one statement whatever the number of rows: the columns as array parameters.
const target = (client: pg.PoolClient): CopyTarget => ({
  countAccounts: Effect.map(query<{ n: number }>(client, "SELECT count(*) AS n FROM accounts"), (rows) => rows[0]!.n),
  insertAccounts: (rows) =>
    query(
      client,
      "INSERT INTO accounts (id, name, created_at) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])",
      [rows.map((r) => r.id), rows.map((r) => r.name), rows.map((r) => r.createdAt)]
    ),
  insertAccessKeys: (rows) =>
    query(
      client,
      `INSERT INTO access_keys (digest, account_id, created_at, revoked_at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])`,
      [
        rows.map((r) => r.digest),
        rows.map((r) => r.accountId),
        rows.map((r) => r.createdAt),
        rows.map((r) => r.revokedAt)
      ]
    ),
  insertStreams: (rows) =>
    rows.length === 0
      ? Effect.void
      : Effect.zipRight(
          query(
            client,
            `INSERT INTO streams (id, account_id, name, type, created_at, last_ts, cleared_ts) OVERRIDING SYSTEM VALUE
               SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[],
                 $7::bigint[])`,
            [
              rows.map((r) => r.id),
              rows.map((r) => r.accountId),
              rows.map((r) => r.name),
              rows.map((r) => r.type),
              rows.map((r) => r.createdAt),
              rows.map((r) => r.lastTs),
              rows.map((r) => r.clearedTs)
            ]
          ),
          // The identity would otherwise hand out ids the copy already used; streams come in ascending id order.
          query(client, "SELECT setval(pg_get_serial_sequence('streams', 'id'), $1)", [rows[rows.length - 1]!.id])
        ),
  insertDashboards: (rows) =>
    query(
      client,
      `INSERT INTO dashboards (id, account_id, name, tiles, view_token, view_token_text, created_at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[])`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.accountId),
        rows.map((r) => r.name),
        rows.map((r) => r.tiles),
        rows.map((r) => r.viewToken),
        rows.map((r) => r.viewTokenText),
        rows.map((r) => r.createdAt)
      ]
    ),
  insertRotations: (rows) =>
    rows.length === 0
      ? Effect.void
      : Effect.zipRight(
          query(
            client,
            `INSERT INTO rotations (id, account_id, name, interval_seconds, view_token, view_token_text, created_at)
               SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::text[],
                 $7::bigint[])`,
            [
              rows.map((r) => r.id),
              rows.map((r) => r.accountId),
              rows.map((r) => r.name),
              rows.map((r) => r.intervalSeconds),
              rows.map((r) => r.viewToken),
              rows.map((r) => r.viewTokenText),
              rows.map((r) => r.createdAt)
            ]
          ),
          query(
            client,
            `INSERT INTO rotation_dashboards (rotation_id, position, dashboard_id)
               SELECT * FROM unnest($1::text[], $2::integer[], $3::text[])`,
            [
              rows.flatMap((r) => r.dashboardIds.map(() => r.id)),
              rows.flatMap((r) => r.dashboardIds.map((_, i) => i)),
              rows.flatMap((r) => r.dashboardIds)
            ]
          )
        ),
  // The rows of a stream come ascending by `ts`, each call's above the last: each call's are new blocks.
  insertEntries: (stream, rows) => {
    const blocks = blockArrays()
    pushBlocks(
      blocks,
      stream,
      rows.map((r) => ({ ts: r.ts, value: r.value, json: r.point }))
    )
    const insert = insertBlocksQuery(blocks)
    return query(client, insert.text, insert.values)
  },
  // Each table's own column types through json_populate_recordset; seq kept as copied (OVERRIDING SYSTEM VALUE).
  insertAlertRows: (table, rows) =>
    rows.length === 0
      ? Effect.void
      : Effect.gen(function* () {
          yield* query(
            client,
            `INSERT INTO ${table} OVERRIDING SYSTEM VALUE SELECT * FROM json_populate_recordset(null::${table}, $1::json)`,
            [JSON.stringify(rows)]
          )
          if (table === "alert_events") {
            yield* query(
              client,
              "SELECT setval(pg_get_serial_sequence('alert_events', 'seq'), (SELECT max(seq) FROM alert_events))"
            )
          }
        })
})

/**
 * Runs `use` in a transaction on one client of `pool`, begun with `begin`. With `commit`, the transaction is
 * committed when `use` succeeds (a COMMIT that answers anything else fails); otherwise, or when `use` fails or is
 * interrupted, it is rolled back. A client whose transaction did not end cleanly is discarded, not reused.
 */
const inTransaction = <A, E, R>(
  pool: pg.Pool,
  begin: string,
  commit: boolean,
  use: (client: pg.PoolClient) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | StorageFailure, R> =>
  Effect.acquireUseRelease(
    Effect.tryPromise({
      try: async () => {
        const client = await pool.connect()
        try {
          await client.query(begin)
          return { client, ended: false }
        } catch (error) {
          client.release(error instanceof Error ? error : new Error(String(error)))
          throw error
        }
      },
      catch: toStorageFailure
    }),
    (held) =>
      Effect.tap(use(held.client), () =>
        Effect.tryPromise({
          try: async () => {
            const end = await held.client.query(commit ? "COMMIT" : "ROLLBACK")
            // COMMIT of a transaction the server already aborted answers ROLLBACK instead of failing.
            if (commit && end.command !== "COMMIT") throw new Error(`COMMIT answered ${end.command}`)
            held.ended = true
          },
          catch: toStorageFailure
        })
      ),
    (held) =>
      Effect.promise(async () => {
        if (held.ended) return held.client.release()
        // Released with an error, the client is closed: the server rolls back whatever it had open.
        held.client.release(new Error("copy transaction not finished"))
      })
  )

/**
 * The `StoreCopy` port on `pool` (docs/api.md section 12). `read` holds one `REPEATABLE READ READ ONLY` transaction:
 * one snapshot of the whole database, whatever servers write meanwhile. `write` holds one transaction committed
 * only when its body succeeded. Stream ids are inserted as given (`OVERRIDING SYSTEM VALUE`) and the identity is
 * moved past them, so streams created later get higher ids.
 */
export const make = (pool: pg.Pool): Context.Tag.Service<StoreCopy> => ({
  read: (use) => inTransaction(pool, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", false, (c) => use(source(c))),
  write: (use) => inTransaction(pool, "BEGIN", true, (c) => use(target(c)))
})

/** A small pool of its own for a copy, ended when the scope closes. */
const copyPool = (config: PostgresConfig): Effect.Effect<pg.Pool, never, Scope.Scope> =>
  Effect.acquireRelease(
    // A copy runs long statements (a count over every entry): no statement timeout.
    Effect.sync(() => makePool(config, { max: 2, statementTimeout: false })),
    (pool) => Effect.promise(() => pool.end().catch(() => undefined))
  )

/**
 * Brings the schema of `config` up to date (creating it if missing) and provides the `StoreCopy` port on a small
 * pool of its own until the scope closes. Fails with `StorageUnavailable` when the server is unreachable,
 * `StorageError` when a migration fails.
 */
export const open = (
  config: PostgresConfig
): Effect.Effect<Context.Tag.Service<StoreCopy>, StorageFailure, Scope.Scope> =>
  Effect.gen(function* () {
    yield* migrate(config)
    return make(yield* copyPool(config))
  })

/**
 * Provides the `StoreCopy` port of `config` as the source of a copy (docs/api.md section 12), on a small pool of its
 * own until the scope closes: its schema is checked, never created or migrated, and only `read` (a `READ ONLY`
 * transaction) is meant to be used. Fails with `SourceRefused` when the schema holds no Dashstream migration table
 * (`not-dashstream`: an empty database, another application's) or other migrations than this version's (`older`,
 * `newer`); with `StorageUnavailable` when the server is unreachable, `StorageError` when the check fails.
 */
export const openSource = (
  config: PostgresConfig
): Effect.Effect<Context.Tag.Service<StoreCopy>, StorageFailure | SourceRefused, Scope.Scope> =>
  Effect.gen(function* () {
    const pool = yield* copyPool(config)
    const applied = yield* Effect.tryPromise({
      try: async () => {
        const table = `${config.schema}.kysely_migration`
        const found = await pool.query<{ t: string | null }>("SELECT to_regclass($1)::text AS t", [table])
        if (found.rows[0]?.t == null) return []
        return (await pool.query<{ name: string }>(`SELECT name FROM ${table}`)).rows.map((r) => r.name)
      },
      catch: toStorageFailure
    })
    const problem = schemaProblem(applied, Object.keys(migrations))
    if (problem !== undefined) return yield* new SourceRefused({ problem })
    return make(pool)
  })
