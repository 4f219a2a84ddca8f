import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Postgres from "@dashstream/storage-postgres"
import * as Sqlite from "@dashstream/storage-sqlite"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { Kysely, Migrator, PostgresDialect } from "kysely"
import pg from "pg"
import { accessKeyDigest, accountCount, accountId, entriesPerStream, type Layout, sqlOf } from "./layout.js"

/** A database holding a {@link Layout}: where it is, and what building it cost (or cost when it was cached). */
export interface Loaded {
  /** The `--db` of `dashstream serve`: `sqlite:<file>` or a `postgres://` URL. */
  readonly db: string
  /** Seconds the bulk load took (migrations, rows, indexes, `VACUUM ANALYZE` on PostgreSQL). */
  readonly loadSeconds: number
  /** True when the database was found complete in the cache and not built in this run. */
  readonly cached: boolean
  /** The newest entry's `ts` (microseconds) the load used. */
  readonly endMicros: number
}

/** What a completed load writes down (SQLite: a JSON file beside the database; PostgreSQL: the database's comment). */
interface Marker {
  readonly layout: Layout
  readonly loadSeconds: number
  readonly endMicros: number
}

// Streams (and their entries) per statement: big enough to be fast, small enough to print progress.
const chunk = 50_000

const progress = (what: string, done: number, total: number, started: number): void => {
  const s = (performance.now() - started) / 1000
  console.error(`  ${what}: ${done.toLocaleString("en-US")} / ${total.toLocaleString("en-US")} (${s.toFixed(0)} s)`)
}

const sameLayout = (a: Layout, b: Layout) =>
  a.streams === b.streams && a.entries === b.entries && a.perAccount === b.perAccount

const name = (l: Layout) => `s${l.streams}_e${l.entries}_p${l.perAccount}`

/**
 * A SQLite database of `layout` in `dir` (`sqlite-<sizes>.db`), built unless a complete one is there. Built in a
 * `.loading` file (renamed once complete, with its marker written beside it): migrated by the adapter's own
 * `migrate`, then filled by `INSERT ... SELECT` from recursive CTEs, 50,000 streams per transaction, with the
 * journal off and `synchronous=OFF` for the load only (the server opens the file in WAL mode as always). No
 * `ANALYZE`: the server never runs it, so the planner works without statistics as it would in production. With
 * `fresh`, an existing copy is rebuilt.
 */
export const sqliteDatabase = async (dir: string, layout: Layout, fresh = false): Promise<Loaded> => {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `sqlite-${name(layout)}.db`)
  const markerFile = `${file}.json`
  if (!fresh && existsSync(file) && existsSync(markerFile)) {
    const marker = JSON.parse(readFileSync(markerFile, "utf8")) as Marker
    if (sameLayout(marker.layout, layout)) {
      return { db: `sqlite:${file}`, loadSeconds: marker.loadSeconds, cached: true, endMicros: marker.endMicros }
    }
  }
  for (const f of [file, markerFile]) rmSync(f, { force: true })
  const loading = `${file}.loading`
  for (const suffix of ["", "-wal", "-shm"]) rmSync(loading + suffix, { force: true })
  const started = performance.now()
  const endMicros = Date.now() * 1000
  await Effect.runPromise(Sqlite.migrate({ filename: loading }))
  const db = new Database(loading)
  try {
    // The entries are loaded as rows of the schema before migration 0007 (entries in blocks), which is then run
    // again to convert them: blocks built by the adapter's own migration rather than a copy of its encoding here.
    db.exec(`DROP TABLE entry_blocks; DELETE FROM kysely_migration WHERE name = '0007_entry_blocks';
      CREATE TABLE entries (id INTEGER PRIMARY KEY, stream_id INTEGER NOT NULL REFERENCES streams(id) ON DELETE CASCADE,
        ts INTEGER NOT NULL, value REAL, point TEXT NOT NULL) STRICT;
      CREATE UNIQUE INDEX entries_stream_ts ON entries (stream_id, ts)`)
    db.pragma("journal_mode = OFF")
    db.pragma("synchronous = OFF")
    db.pragma("locking_mode = EXCLUSIVE")
    db.pragma("cache_size = -1000000")
    const accounts = db.prepare("INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)")
    const keys = db.prepare(
      "INSERT INTO access_keys (digest, account_id, created_at, revoked_at) VALUES (?, ?, ?, NULL)"
    )
    db.transaction(() => {
      for (let k = 0; k < accountCount(layout); k++) {
        const created = endMicros - 30 * 86_400_000_000
        accounts.run(accountId(k), `scale ${k}`, created)
        keys.run(accessKeyDigest(k), accountId(k), created)
      }
    })()
    const f = sqlOf(layout, endMicros)
    const p = layout.perAccount
    const streams = db.prepare(
      `WITH RECURSIVE q(r) AS (SELECT CAST(? AS INTEGER) UNION ALL SELECT r + 1 FROM q WHERE r < ?)
       INSERT INTO streams (id, account_id, name, type, created_at, last_ts, cleared_ts)
       SELECT r + 1, '00000000-0000-4000-8000-' || printf('%012x', r / ${p}), 's' || (r % ${p}), 'number',
         ${f.end("r")} - ${f.count("r")} * ${f.step("r")} - 1000000,
         CASE WHEN ${f.count("r")} > 0 THEN ${f.end("r")} END, NULL
       FROM q`
    )
    const { base, extra } = entriesPerStream(layout)
    const most = base + (extra > 0 ? 1 : 0)
    // Stream by stream, each stream's entries in ts order: rowids and index keys are appended in order.
    const entries =
      most === 0
        ? undefined
        : db.prepare(
            `WITH RECURSIVE q(r) AS (SELECT CAST(? AS INTEGER) UNION ALL SELECT r + 1 FROM q WHERE r < ?),
               k(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM k WHERE j < ${most - 1})
             INSERT INTO entries (stream_id, ts, value, point)
             SELECT r + 1, ${f.end("r")} - (${f.count("r")} - 1 - j) * ${f.step("r")}, (7 * r + 13 * j) % 1000,
               '{"number":' || ((7 * r + 13 * j) % 1000) || '}'
             FROM q CROSS JOIN k WHERE j < ${f.count("r")}`
          )
    for (let lo = 0; lo < layout.streams; lo += chunk) {
      const hi = Math.min(lo + chunk, layout.streams) - 1
      db.transaction(() => {
        streams.run(lo, hi)
        entries?.run(lo, hi)
      })()
      if ((hi + 1) % 500_000 === 0 || hi + 1 === layout.streams) {
        progress("SQLite streams loaded", hi + 1, layout.streams, started)
      }
    }
    db.pragma("locking_mode = NORMAL")
    db.pragma("journal_mode = WAL")
  } finally {
    db.close()
  }
  await Effect.runPromise(Sqlite.migrate({ filename: loading }))
  const loadSeconds = (performance.now() - started) / 1000
  const marker: Marker = { layout, loadSeconds, endMicros }
  renameSync(loading, file)
  writeFileSync(markerFile, JSON.stringify(marker))
  return { db: `sqlite:${file}`, loadSeconds, cached: false, endMicros }
}

const withClient = async <A>(url: string, f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

const databaseUrl = (serverUrl: string, database: string) => {
  const u = new URL(serverUrl)
  u.pathname = `/${database}`
  return u.toString()
}

/**
 * A PostgreSQL database of `layout` on the server of `serverUrl` (a URL of a database to run `CREATE DATABASE`
 * from), named `dashstream_scale_<sizes>`, built unless it is there with the marker a completed load leaves (the
 * database's comment). Built by dropping and creating it, migrating with the adapter's migrations before 0007, then
 * `INSERT ... SELECT` from `generate_series`, 50,000 streams per statement, with foreign-key triggers off
 * (`session_replication_role = replica`: the rows are consistent by construction) and `synchronous_commit` off for
 * the load only; then the adapter's own `migrate` (0007 converts the entries to blocks), `VACUUM (ANALYZE)` and a
 * checkpoint, as autovacuum would leave a table that size. With
 * `fresh`, an existing copy is rebuilt.
 */
export const postgresDatabase = async (serverUrl: string, layout: Layout, fresh = false): Promise<Loaded> => {
  const database = `dashstream_scale_${name(layout)}`
  const url = databaseUrl(serverUrl, database)
  const existing = await withClient(serverUrl, async (c) => {
    const rows = await c.query<{ comment: string | null }>(
      "SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1",
      [database]
    )
    return rows.rows[0]
  })
  if (!fresh && existing?.comment) {
    const marker = JSON.parse(existing.comment) as Marker
    if (sameLayout(marker.layout, layout)) {
      return { db: url, loadSeconds: marker.loadSeconds, cached: true, endMicros: marker.endMicros }
    }
  }
  const started = performance.now()
  const endMicros = Date.now() * 1000
  await withClient(serverUrl, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
    await c.query(`CREATE DATABASE ${database}`)
  })
  await migrateBeforeBlocks(url)
  await withClient(url, async (c) => {
    await c.query("SET session_replication_role = replica")
    await c.query("SET synchronous_commit = off")
    await c.query("SET maintenance_work_mem = '512MB'")
    const ks = Array.from({ length: accountCount(layout) }, (_, k) => k)
    const created = endMicros - 30 * 86_400_000_000
    await c.query(
      `INSERT INTO accounts (id, name, created_at) SELECT id, 'scale ' || k, $3::bigint FROM unnest($1::text[], $2::int[]) AS a(id, k)`,
      [ks.map(accountId), ks, created]
    )
    await c.query(
      `INSERT INTO access_keys (digest, account_id, created_at, revoked_at)
       SELECT d, id, $3::bigint, NULL FROM unnest($1::text[], $2::text[]) AS a(d, id)`,
      [ks.map(accessKeyDigest), ks.map(accountId), created]
    )
    const f = sqlOf(layout, endMicros)
    const p = layout.perAccount
    for (let lo = 0; lo < layout.streams; lo += chunk) {
      const hi = Math.min(lo + chunk, layout.streams) - 1
      await c.query(
        `INSERT INTO streams (id, account_id, name, type, created_at, last_ts, cleared_ts) OVERRIDING SYSTEM VALUE
         SELECT r + 1, '00000000-0000-4000-8000-' || lpad(to_hex(r / ${p}), 12, '0'), 's' || (r % ${p}), 'number',
           ${f.end("r")} - ${f.count("r")} * ${f.step("r")} - 1000000,
           CASE WHEN ${f.count("r")} > 0 THEN ${f.end("r")} END, NULL
         FROM generate_series($1::bigint, $2::bigint) AS r`,
        [lo, hi]
      )
      // Stream by stream, each stream's entries in ts order: ids and index keys are appended in order.
      await c.query(
        `INSERT INTO entries (stream_id, ts, value, point)
         SELECT r + 1, ${f.end("r")} - (${f.count("r")} - 1 - j) * ${f.step("r")}, (7 * r + 13 * j) % 1000,
           '{"number":' || ((7 * r + 13 * j) % 1000) || '}'
         FROM generate_series($1::bigint, $2::bigint) AS r
         CROSS JOIN LATERAL generate_series(0::bigint, ${f.count("r")} - 1) AS j`,
        [lo, hi]
      )
      if ((hi + 1) % 500_000 === 0 || hi + 1 === layout.streams) {
        progress("PostgreSQL streams loaded", hi + 1, layout.streams, started)
      }
    }
    // The identity goes on after the loaded ids, as if the streams had been created one by one.
    await c.query(`SELECT setval(pg_get_serial_sequence('streams', 'id'), $1)`, [Math.max(layout.streams, 1)])
    await c.query("SET session_replication_role = origin")
  })
  // The entries are loaded as rows of the schema before migration 0007 (entries in blocks), which the adapter's own
  // `migrate` then converts, as it converts a user's database: blocks built by the migration, not by a copy of its
  // encoding here.
  const converting = performance.now()
  console.error("  PostgreSQL: migration 0007 (entries in blocks) ...")
  await Effect.runPromise(Postgres.migrate(await Effect.runPromise(Postgres.parseUrl(url))))
  console.error(`  PostgreSQL: converted in ${((performance.now() - converting) / 1000).toFixed(0)} s`)
  await withClient(url, async (c) => {
    console.error("  PostgreSQL: VACUUM (ANALYZE) ...")
    await c.query("VACUUM (ANALYZE)")
    await c.query("CHECKPOINT")
  })
  const loadSeconds = (performance.now() - started) / 1000
  const marker: Marker = { layout, loadSeconds, endMicros }
  await withClient(serverUrl, (c) => c.query(`COMMENT ON DATABASE ${database} IS '${JSON.stringify(marker)}'`))
  return { db: url, loadSeconds, cached: false, endMicros }
}

/**
 * Migrates the (empty) database of `url` with the PostgreSQL adapter's migrations before 0007, so that its entries
 * are rows of `entries` (as on a database made before migration 0007); throws when a migration fails.
 */
const migrateBeforeBlocks = async (url: string): Promise<void> => {
  const kysely = new Kysely<any>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) })
  })
  try {
    const migrations = Object.fromEntries(Object.entries(Postgres.migrations).filter(([name]) => name < "0007"))
    const { error } = await new Migrator({
      db: kysely,
      provider: { getMigrations: async () => migrations }
    }).migrateToLatest()
    if (error !== undefined) throw error
  } finally {
    await kysely.destroy()
  }
}

/** Drops the database of `layout` on the server of `serverUrl` (a baseline built for one run). */
export const dropPostgresDatabase = (serverUrl: string, layout: Layout): Promise<unknown> =>
  withClient(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS dashstream_scale_${name(layout)} WITH (FORCE)`))
