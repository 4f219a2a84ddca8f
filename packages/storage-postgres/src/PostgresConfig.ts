import { Data, Either, Redacted } from "effect"

/**
 * How to reach PostgreSQL and how to pool connections, parsed from a `postgres://` URL by {@link parseUrl}.
 * Durations in milliseconds.
 */
export interface PostgresConfig {
  /** The URL handed to `pg`, without the Dashstream parameters below (it may hold a password). */
  readonly url: Redacted.Redacted<string>
  /** Most connections the pool opens (URL `pool_max`, default 10). */
  readonly poolMax: number
  /** An idle pooled connection is closed after this long (URL `pool_idle_timeout_ms`, default 10,000; 0 never). */
  readonly poolIdleTimeoutMs: number
  /**
   * Longest wait for a connection, either a new one or a free one from a full pool (URL `connect_timeout_ms`,
   * default 5,000). Past it an operation fails with `StorageUnavailable`.
   */
  readonly connectTimeoutMs: number
  /** Server-side `statement_timeout` of every pooled connection (URL `statement_timeout_ms`); `null`: the server's. */
  readonly statementTimeoutMs: number | null
  /** The schema holding Dashstream's tables (URL `schema`, default `public`), put first on the `search_path`. */
  readonly schema: string
  /** The libpq `options` the URL gave, if any (they are passed on with the `search_path` added). */
  readonly options: string | null
}

/** Defaults of the pool settings (see {@link PostgresConfig}). */
export const defaults = {
  poolMax: 10,
  poolIdleTimeoutMs: 10_000,
  connectTimeoutMs: 5_000,
  schema: "public"
} as const

/**
 * A database URL that is not a usable `postgres://` URL, or has a bad Dashstream parameter. The message names the
 * problem and never repeats the URL (it may hold a password).
 */
export class InvalidPostgresUrl extends Data.TaggedError("InvalidPostgresUrl")<{ readonly message: string }> {}

const expected = "expected postgres://user:password@host:port/database"

interface IntParam {
  readonly name: string
  readonly min: number
  readonly max: number
}

const intParams = {
  poolMax: { name: "pool_max", min: 1, max: 10_000 },
  poolIdleTimeoutMs: { name: "pool_idle_timeout_ms", min: 0, max: 2_147_483_647 },
  connectTimeoutMs: { name: "connect_timeout_ms", min: 1, max: 2_147_483_647 },
  statementTimeoutMs: { name: "statement_timeout_ms", min: 0, max: 2_147_483_647 }
} as const satisfies Record<string, IntParam>

// Lower-case unquoted identifiers only: they mean the same in `search_path`, `CREATE SCHEMA` and the Migrator.
const schemaPattern = /^[a-z_][a-z0-9_]{0,62}$/

/**
 * Parses a `postgres://` or `postgresql://` URL into a {@link PostgresConfig}. Besides what `pg` understands
 * (user, password, host, port, database, `sslmode`, `application_name`, `options`, ...), it reads and removes:
 *
 * - `pool_max`: most pooled connections, 1..10000 (default 10);
 * - `pool_idle_timeout_ms`: idle connection lifetime in ms, 0 = never closed (default 10000);
 * - `connect_timeout_ms`: longest wait for a connection in ms, at least 1 (default 5000);
 * - `statement_timeout_ms`: server-side statement timeout in ms, 0 = none (default: the server's setting);
 * - `schema`: a lower-case identifier, the schema of Dashstream's tables (default `public`), created by `migrate`.
 *
 * Fails with {@link InvalidPostgresUrl} for another scheme, an unparsable URL, a repeated or out-of-range
 * parameter, or a bad schema name.
 */
export const parseUrl = (
  url: string | Redacted.Redacted<string>
): Either.Either<PostgresConfig, InvalidPostgresUrl> => {
  const text = (typeof url === "string" ? url : Redacted.value(url)).trim()
  const fail = (message: string) => Either.left(new InvalidPostgresUrl({ message }))
  if (!/^postgres(ql)?:\/\//i.test(text)) {
    return fail(`the database URL must start with postgres:// or postgresql://; ${expected}`)
  }
  let parsed: URL
  try {
    parsed = new URL(text)
  } catch {
    return fail(`the database URL is not a valid URL; ${expected}`)
  }
  const params = parsed.searchParams
  const single = (name: string): Either.Either<string | null, InvalidPostgresUrl> => {
    const values = params.getAll(name)
    if (values.length > 1) return fail(`the database URL gives ${name} more than once`)
    params.delete(name)
    return Either.right(values[0] ?? null)
  }
  const int = (p: IntParam): Either.Either<number | null, InvalidPostgresUrl> =>
    Either.flatMap(single(p.name), (value) => {
      if (value === null) return Either.right(null)
      const n = /^\d{1,10}$/.test(value) ? Number(value) : NaN
      return n >= p.min && n <= p.max
        ? Either.right(n)
        : fail(
            `${p.name} in the database URL must be a whole number from ${p.min} to ${p.max}, got ${JSON.stringify(value)}`
          )
    })
  return Either.gen(function* () {
    const poolMax = yield* int(intParams.poolMax)
    const poolIdleTimeoutMs = yield* int(intParams.poolIdleTimeoutMs)
    const connectTimeoutMs = yield* int(intParams.connectTimeoutMs)
    const statementTimeoutMs = yield* int(intParams.statementTimeoutMs)
    const schema = yield* single("schema")
    if (schema !== null && !schemaPattern.test(schema)) {
      return yield* fail(
        `schema in the database URL must be a lower-case identifier (a-z, 0-9, _; not starting with a digit; at most 63 characters), got ${JSON.stringify(schema)}`
      )
    }
    // `pg` lets the URL's `options` override the config's, so it is taken out here and merged with the search_path.
    const options = yield* single("options")
    return {
      url: Redacted.make(parsed.toString()),
      poolMax: poolMax ?? defaults.poolMax,
      poolIdleTimeoutMs: poolIdleTimeoutMs ?? defaults.poolIdleTimeoutMs,
      connectTimeoutMs: connectTimeoutMs ?? defaults.connectTimeoutMs,
      statementTimeoutMs,
      schema: schema ?? defaults.schema,
      options: options === null || options.trim() === "" ? null : options
    }
  })
}
