import { Redacted } from "effect"
import pg from "pg"
import type { PostgresConfig } from "../PostgresConfig.js"

const INT8_OID = 20

// Every BIGINT the adapter stores (ids, microsecond times) is below 2^53, so a JS number holds it exactly.
// Set per pool rather than on the global `pg.types`, which other code in the process may rely on.
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID && format !== "binary"
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser
}

/** The `search_path` and any `options` the URL gave, as libpq startup options. */
const startupOptions = (config: PostgresConfig): string => {
  const searchPath = `-c search_path=${config.schema}`
  return config.options === null ? searchPath : `${config.options} ${searchPath}`
}

/**
 * The connection settings of `config` as `pg` takes them. `withStatementTimeout: false` leaves the server's
 * statement timeout (migrations may wait long for the migration lock).
 */
export const clientConfig = (config: PostgresConfig, withStatementTimeout: boolean): pg.ClientConfig => ({
  connectionString: Redacted.value(config.url),
  connectionTimeoutMillis: config.connectTimeoutMs,
  options: startupOptions(config),
  // Shown in pg_stat_activity; an `application_name` in the URL wins.
  application_name: "dashstream",
  types,
  keepAlive: true,
  ...(withStatementTimeout && config.statementTimeoutMs !== null
    ? { statement_timeout: config.statementTimeoutMs }
    : {})
})

/**
 * A `pg.Pool` for `config` (`max` and `statementTimeout` override the pool size and drop the statement timeout).
 * A connection that breaks is dropped by the pool and the next checkout opens a new one, so the pool recovers by
 * itself when the server comes back.
 */
export const makePool = (
  config: PostgresConfig,
  overrides: { readonly max?: number; readonly statementTimeout?: boolean } = {}
): pg.Pool => {
  const pool = new pg.Pool({
    ...clientConfig(config, overrides.statementTimeout ?? true),
    max: overrides.max ?? config.poolMax,
    idleTimeoutMillis: config.poolIdleTimeoutMs
  })
  // An idle connection that breaks (server restart, pg_terminate_backend) is removed by the pool, which then emits
  // `error`; without a listener Node would crash the process. Nothing is lost: the next checkout reconnects.
  pool.on("error", () => {})
  // A checked-out client emits `error` too when its connection breaks between two queries; the pending or next
  // query fails and the client is discarded on release (it is no longer queryable).
  pool.on("connect", (client) => {
    client.on("error", () => {})
  })
  return pool
}
