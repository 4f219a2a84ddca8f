import { BlockList, isIP } from "node:net"
import { MAX_SECONDS, type Micros, micros } from "@dashstream/core"
import { parsePolicy, type TierPolicy } from "@dashstream/decimation"
// The parsers alone (node:net and effect), not the HTTP interface, which `serve` loads lazily.
import { parseBasePath, parseTrustProxy, type TrustedProxies } from "@dashstream/http/ReverseProxy"
import { Config, ConfigError, ConfigProvider, Effect, Either, LogLevel, Option, Redacted } from "effect"
import { otherVariables, type ServeFlagName, type ServeFlags, type ServeFlagSpec, serveFlags } from "./ServeFlags.js"
import { UsageError } from "./Errors.js"
import { type Database, parseUrl } from "./Storage.js"

/**
 * The server's configuration, read from command-line flags and environment variables (docs/api.md section 8) with
 * effect's `Config`. Each setting is a `Config` that reads the key `--<flag>` and, when no flag was given, its
 * environment variable (a flag beats its variable), then falls back to its default; the names, variables and defaults
 * of `serve`'s flags are declared in `ServeFlags.ts`, the parsers here. {@link provider} puts a command's
 * flags and the environment behind one `ConfigProvider`, so tests pass an environment of their own.
 *
 * A bad value fails with a {@link UsageError} (exit code 2) whose message is one sentence naming the flag (or
 * variable) and the accepted forms, never the value of a secret.
 */

/** The environment, as `process.env` gives it. */
export type Env = Readonly<Record<string, string | undefined>>

/**
 * A command's flag values, by flag name without the dashes (`"rate-limit"`), as `util.parseArgs` returns them: the
 * text of a string flag (every text, in order, for a repeatable one), `true` for a boolean flag that was given,
 * `undefined` (or absent) for a flag not given.
 */
export type Flags = Readonly<Record<string, string | ReadonlyArray<string> | boolean | undefined>>

/**
 * The `ConfigProvider` of one command: each flag given under the key `--<name>` (a boolean flag as `"true"`, a
 * repeated flag as its values joined by commas), and each environment variable under its name, trimmed; a variable
 * that is empty or blank counts as not set.
 */
export const provider = (flags: Flags, env: Env): ConfigProvider.ConfigProvider => {
  const map = new Map<string, string>()
  for (const [name, value] of Object.entries(env)) {
    const trimmed = value?.trim()
    if (trimmed !== undefined && trimmed !== "") map.set(name, trimmed)
  }
  for (const [name, value] of Object.entries(flags)) {
    if (typeof value === "string") map.set(`--${name}`, value)
    else if (value === true) map.set(`--${name}`, "true")
    else if (Array.isArray(value) && value.length > 0) map.set(`--${name}`, value.join(","))
  }
  return ConfigProvider.fromMap(map)
}

/**
 * Reads `config` from `flags` and `env` (see {@link provider}). A bad value is a {@link UsageError} with the message
 * of its setting (the first bad one, in the order the settings are declared).
 */
export const load = <A>(config: Config.Config<A>, flags: Flags, env: Env): Either.Either<A, UsageError> =>
  Effect.runSync(Effect.either(Effect.mapError(provider(flags, env).load(config), toUsageError)))

/** The first bad value's sentence; effect's own messages (`Expected an integer value...`) get the key in front. */
const firstInvalid = (error: ConfigError.ConfigError): string | undefined => {
  switch (error._op) {
    case "And":
    case "Or":
      return firstInvalid(error.left) ?? firstInvalid(error.right)
    case "InvalidData": {
      const name = error.path.join(".")
      return error.message.includes(name) ? error.message : `${name}: ${error.message}`
    }
    default:
      return undefined
  }
}

const toUsageError = (error: ConfigError.ConfigError): UsageError =>
  new UsageError({ message: firstInvalid(error) ?? `the configuration cannot be read: ${String(error)}` })

/**
 * How a setting's text is read: the value, or the sentence for stderr. `name` is the key the text came from
 * (`--port`, `DASHSTREAM_DB`), for the sentence to name it.
 */
type Parse<A> = (text: string, name: string) => Either.Either<A, string>

/** The setting at key `name`, read by `parse`; a bad value fails with `InvalidData` carrying `parse`'s sentence. */
const setting = <A>(name: string, parse: Parse<A>): Config.Config<A> =>
  Config.mapOrFail(Config.string(name), (text) =>
    Either.mapLeft(parse(text, name), (message) => ConfigError.InvalidData([], message))
  )

/**
 * The flag `--<flag>` if given, else the variable `variable`. Only a missing flag falls through to the variable: a
 * bad flag value is reported even when the variable is set.
 */
const flagOrEnv = <A>(flag: string, variable: string, parse: Parse<A>): Config.Config<A> =>
  Config.orElseIf(setting(`--${flag}`, parse), {
    if: ConfigError.isMissingDataOnly,
    orElse: () => setting(variable, parse)
  })

/** The database when no `--db` and no `DASHSTREAM_DB` is given: a SQLite file under the working directory. */
export const defaultDatabaseUrl = "sqlite:./data/dashstream.db"

/** Which database to use: a SQLite file or a PostgreSQL URL (the backends of `Storage.ts`). */
export type { Database }

/** Where a setting came from; the first-start hint repeats `--db` only when the user typed it. */
export type Source = "flag" | "env" | "default"

/** The database setting: the parsed {@link Database}, where it came from, and its text as given. */
export interface DatabaseConfig {
  readonly database: Database
  readonly source: Source
  readonly url: Redacted.Redacted<string>
}

/**
 * Parses a database URL: `sqlite:<path>` (the path may be relative; its directory is created on first use) or
 * `postgres://...` / `postgresql://...` (the URL must parse; the adapter checks the rest), as the backend registry
 * (`Storage.ts`) recognises them. `name` is the flag or variable the value came from, used in the error message. The
 * value itself is never echoed (it may hold a password), only its scheme.
 */
export const parseDatabaseUrl = (value: string, name: string): Either.Either<Database, UsageError> =>
  Either.mapLeft(parseUrl(value, name), (message) => new UsageError({ message }))

const databaseAt = (name: string, source: Source): Config.Config<DatabaseConfig> =>
  Config.mapOrFail(Config.redacted(name), (url) =>
    Either.match(parseUrl(Redacted.value(url), name), {
      onLeft: (message) => Either.left(ConfigError.InvalidData([], message)),
      onRight: (database) => Either.right({ database, source, url })
    })
  )

/** `--db`, else `DASHSTREAM_DB`, else {@link defaultDatabaseUrl}. */
const database: Config.Config<DatabaseConfig> = Config.orElseIf(databaseAt("--db", "flag"), {
  if: ConfigError.isMissingDataOnly,
  orElse: () => databaseAt(otherVariables.db.name, "env")
}).pipe(
  Config.withDefault<DatabaseConfig>({
    database: Either.getOrThrow(parseUrl(defaultDatabaseUrl, "the default database")),
    source: "default",
    url: Redacted.make(defaultDatabaseUrl)
  })
)

/** The database from `--db` (`flag`), else `DASHSTREAM_DB`, else {@link defaultDatabaseUrl}. */
export const databaseConfig = (flag: string | undefined, env: Env): Either.Either<DatabaseConfig, UsageError> =>
  load(database, { db: flag }, env)

/** The flags `serve` reads, as `util.parseArgs` returns them (declared in `ServeFlags.ts`). */
export type { ServeFlags }

/** A time of day in UTC, to the minute: when `serve` runs the daily decimation pass (docs/api.md section 9). */
export interface DailyTime {
  /** 0..23 */
  readonly hour: number
  /** 0..59 */
  readonly minute: number
}

/** The configuration of `serve` besides the database (docs/api.md sections 5, 7, 8). */
export interface ServeConfig {
  /** Interface to listen on; default `127.0.0.1` (loopback only). */
  readonly host: string
  /** TCP port; default 8080; 0 picks a free port (the listening line shows which). */
  readonly port: number
  /** Requests per second per access key, with bursts of the same size; `null` (the default) turns limiting off. */
  readonly rateLimit: number | null
  /**
   * Bearer token of the admin API and key of console sessions (`DASHSTREAM_ADMIN_TOKEN`); `null` (the default): none
   * configured, see {@link adminSetting} for what `serve` does then.
   */
  readonly adminToken: Redacted.Redacted<string> | null
  /**
   * `false` with `--no-admin` or `DASHSTREAM_ADMIN=off` (any false word): the admin API and the console stay off,
   * whatever else is set (docs/api.md section 14). Default `true`.
   */
  readonly admin: boolean
  /** Log one line per request (method, path with the access key redacted, status, duration). Default off. */
  readonly logRequests: boolean
  /**
   * Log the stream names InfluxDB line protocol writes skipped because they are not widgets of the key's account,
   * with the account's id, each distinct name at most once a minute per account (docs/api.md section 13.1), so that
   * an operator can find the names to declare. Default on; `DASHSTREAM_LOG_SKIPPED=0` turns it off.
   */
  readonly logSkipped: boolean
  /** When the daily decimation pass runs (UTC); default 03:00; `null` (`off`) runs none. */
  readonly decimateAt: DailyTime | null
  /** The decimation tiers; default the contract's (section 9), `5m:48h,1h:14d,1d:90d`. */
  readonly decimationPolicy: TierPolicy
  /**
   * Processes serving HTTP on the port (`--workers`, `DASHSTREAM_WORKERS`); default 1.
   * 1 is one process, as before; more is a `node:cluster` primary and that many workers (see
   * `Workers.ts`).
   */
  readonly workers: number
  /**
   * Origins whose web pages may push, read exports and follow event streams (`--cors-origin`, repeatable, or
   * `DASHSTREAM_CORS_ORIGIN`, comma-separated): exact origins such as `https://example.com`, or `*` for any. Empty
   * (the default): no CORS.
   */
  readonly corsOrigins: ReadonlyArray<string>
  /**
   * Which sites may show the dashboard page in a frame: the CSP `frame-ancestors` source list
   * (`--frame-ancestors`, `DASHSTREAM_FRAME_ANCESTORS`, see {@link parseFrameAncestors}); default `'self'`.
   */
  readonly frameAncestors: string
  /**
   * The path prefix every route is served under behind a reverse proxy (docs/api.md section 16; `--base-path`,
   * `DASHSTREAM_BASE_PATH`, see `parseBasePath`): `/dashboards`, no trailing slash; `""` (the default) for the root.
   */
  readonly basePath: string
  /**
   * The reverse proxies whose `X-Forwarded-For` / `X-Forwarded-Proto` are believed (docs/api.md section 16;
   * `--trust-proxy`, `DASHSTREAM_TRUST_PROXY`: addresses and CIDR ranges, comma-separated); `null` (the default):
   * none, the headers are ignored.
   */
  readonly trustProxy: TrustedProxies | null
  /**
   * The most time, in seconds, to receive a whole request, headers and body (`--request-timeout`,
   * `DASHSTREAM_REQUEST_TIMEOUT`, see {@link parseRequestTimeout}): past it the request is answered 408
   * `request_timeout` and its connection closed. Answers are not timed. Default 30.
   */
  readonly requestTimeout: number
  /**
   * `serve --demo` (`DASHSTREAM_DEMO`, docs/api.md section 8.5): keep an account "demo" with a dashboard "Demo" of a
   * dozen widget types, made on the first start and kept across restarts, and push live data to it every few seconds
   * while the server runs. Default off.
   */
  readonly demo: boolean
}

/**
 * The setting of the `serve` flag `name` (`ServeFlags.ts`): the flag if given, else its variable if it has one, read by
 * `parse`; else its default text read by `parse` (a bad default is a defect, thrown when it is read), or `unset`
 * for a flag without a default (the compiler asks for `unset` exactly then).
 */
const serveFlag = <F extends ServeFlagName, A>(
  name: F,
  parse: Parse<A>,
  ...unset: (typeof serveFlags)[F] extends { readonly default: string } ? [] : [unset: A]
): Config.Config<A> => {
  const spec: ServeFlagSpec = serveFlags[name]
  const read = spec.env === undefined ? setting(`--${name}`, parse) : flagOrEnv(name, spec.env.name, parse)
  const { default: text } = spec
  const fallback =
    text === undefined
      ? Config.succeed(unset[0] as A)
      : Config.sync(() =>
          Either.getOrThrowWith(parse(text, `the default of --${name}`), (message) => new Error(message))
        )
  return Config.orElseIf(read, { if: ConfigError.isMissingDataOnly, orElse: () => fallback })
}

/** A parser of `UsageError`s as a {@link Parse}. */
const sentence =
  <A>(parse: (text: string, name: string) => Either.Either<A, UsageError>): Parse<A> =>
  (text, name) =>
    Either.mapLeft(parse(text, name), (error) => error.message)

/** `--decimation-tiers`, else `DASHSTREAM_DECIMATION_TIERS`, else the default tiers (README "Decimation"). */
const tiers: Config.Config<TierPolicy> = serveFlag("decimation-tiers", (text, name) =>
  Either.mapLeft(parsePolicy(text), (error) => `${name}: ${error.message}`)
)

/** `--base-path`, else `DASHSTREAM_BASE_PATH`, else `""` (the root; docs/api.md section 16). */
const basePathSetting: Config.Config<string> = serveFlag("base-path", parseBasePath, "")

/** `DASHSTREAM_ADMIN`'s variable name: `--no-admin` turns the admin API off, the variable says whether it is on. */
const adminVariable = serveFlags["no-admin"].env.name

/** Every setting of `serve`, one entry each, in the order their errors are reported. */
const serve: Config.Config<ServeConfig> = Config.all({
  host: serveFlag("host", parseHost),
  port: serveFlag("port", parsePort),
  rateLimit: serveFlag<"rate-limit", number | null>("rate-limit", parseRateLimit, null),
  adminToken: Config.map(Config.option(Config.redacted(otherVariables.adminToken.name)), Option.getOrNull),
  admin: Config.withDefault(
    Config.orElseIf(
      Config.map(setting("--no-admin", parseBoolean), (no) => !no),
      { if: ConfigError.isMissingDataOnly, orElse: () => setting(adminVariable, parseBoolean) }
    ),
    true
  ),
  logRequests: serveFlag("log-requests", parseBoolean, false),
  logSkipped: serveFlag("log-skipped", parseBoolean),
  // Lambdas: these parsers are declared further down.
  decimateAt: serveFlag(
    "decimate-at",
    sentence((text, name) => parseDailyTime(text, name))
  ),
  decimationPolicy: tiers,
  workers: serveFlag(
    "workers",
    sentence((text, name) => parseWorkers(text, name))
  ),
  corsOrigins: serveFlag("cors-origin", parseCorsOrigins, []),
  frameAncestors: serveFlag("frame-ancestors", parseFrameAncestors),
  basePath: basePathSetting,
  trustProxy: serveFlag<"trust-proxy", TrustedProxies | null>("trust-proxy", parseTrustProxy, null),
  requestTimeout: serveFlag("request-timeout", parseRequestTimeout),
  demo: serveFlag("demo", parseBoolean, false)
})

/**
 * The configuration of `serve` from its flags and the environment. Fails with a {@link UsageError} for a bad
 * `--host`, `--port` (not 0..65535), `--rate-limit` (not a whole number >= 1), `--log-requests` /
 * `DASHSTREAM_LOG_REQUESTS`, `--log-skipped` / `DASHSTREAM_LOG_SKIPPED`, `--decimate-at` / `DASHSTREAM_DECIMATE_AT`
 * (see {@link parseDailyTime}), `--decimation-tiers` / `DASHSTREAM_DECIMATION_TIERS` (see {@link decimationPolicy}),
 * `--workers` / `DASHSTREAM_WORKERS` (see {@link parseWorkers}; default 1) or
 * `--frame-ancestors` / `DASHSTREAM_FRAME_ANCESTORS` (see {@link parseFrameAncestors}), `--base-path` /
 * `DASHSTREAM_BASE_PATH` (see `parseBasePath`), `--trust-proxy` / `DASHSTREAM_TRUST_PROXY` (see `parseTrustProxy`) or
 * `--request-timeout` / `DASHSTREAM_REQUEST_TIMEOUT` (see {@link parseRequestTimeout}).
 */
export const serveConfig = (flags: ServeFlags, env: Env): Either.Either<ServeConfig, UsageError> =>
  load(serve, flags, env)

/**
 * The warnings `serve` logs at start for settings it accepts but that are most likely a mistake: a `--trust-proxy`
 * range that trusts every peer (`0.0.0.0/0`, `::/0`), which lets any client choose the address and scheme the server
 * sees (docs/running.md, "Behind a reverse proxy"). Empty when nothing is amiss.
 */
export const startWarnings = (config: ServeConfig): ReadonlyArray<string> => {
  const everyone = config.trustProxy?.everyone ?? []
  return everyone.length === 0
    ? []
    : [
        `--trust-proxy ${everyone.join(",")} trusts every peer: any client can write X-Forwarded-For and ` +
          "X-Forwarded-Proto, choosing the address the sign-in throttle and the request log see and the console " +
          "cookie's Secure; list only your reverse proxies' addresses"
      ]
}

/**
 * What `serve` does about the admin API and the console (docs/api.md sections 7 and 14):
 * - `Off`: off (404), with `--no-admin` / `DASHSTREAM_ADMIN=off`, or with no token configured on an address that is
 *   not loopback (nobody else on the network may find an admin API with a token printed on this machine's console);
 * - `Token`: on, with the configured `DASHSTREAM_ADMIN_TOKEN`;
 * - `FirstRun`: on, with a random token generated for this run and printed once (no token configured, loopback host).
 */
export type AdminSetting =
  | { readonly _tag: "Off" }
  | { readonly _tag: "Token"; readonly token: Redacted.Redacted<string> }
  | { readonly _tag: "FirstRun" }

/** The {@link AdminSetting} of a `serve` configuration. */
export const adminSetting = (config: ServeConfig): AdminSetting =>
  !config.admin
    ? { _tag: "Off" }
    : config.adminToken !== null
      ? { _tag: "Token", token: config.adminToken }
      : isLoopback(config.host)
        ? { _tag: "FirstRun" }
        : { _tag: "Off" }

/**
 * True when `host` names only this machine: `localhost`, an IPv4 address in 127.0.0.0/8, `::1`, or an IPv4-mapped
 * IPv6 loopback (`::ffff:127.0.0.1`). `0.0.0.0` and `::` (every interface) are not.
 */
export const isLoopback = (host: string): boolean => {
  const h = host.toLowerCase()
  if (h === "localhost" || h.endsWith(".localhost")) return true
  const family = isIP(h)
  return family !== 0 && loopback.check(h, family === 4 ? "ipv4" : "ipv6")
}

// BlockList also matches IPv4-mapped IPv6 forms of the IPv4 subnet.
const loopback = new BlockList()
loopback.addSubnet("127.0.0.0", 8, "ipv4")
loopback.addAddress("::1", "ipv6")

/** The most `--workers` accepted. */
export const maxWorkers = 1024

/** Parses `--workers` (or `DASHSTREAM_WORKERS`, named by `name`): a whole number from 1 to {@link maxWorkers}. */
export const parseWorkers = (value: string, name: string): Either.Either<number, UsageError> => {
  const n = /^\d{1,4}$/.test(value.trim()) ? Number(value.trim()) : 0
  return n >= 1 && n <= maxWorkers
    ? Either.right(n)
    : Either.left(
        new UsageError({
          message: `${name} must be a whole number of processes from 1 to ${maxWorkers}, got ${JSON.stringify(value)}`
        })
      )
}

/**
 * Parses a daily UTC time `HH:MM` (`H:MM` too; 00:00 to 23:59), or `off` (any case) for none. `name` is the flag
 * or variable the value came from, used in the error message.
 */
export const parseDailyTime = (value: string, name: string): Either.Either<DailyTime | null, UsageError> => {
  const trimmed = value.trim()
  if (trimmed.toLowerCase() === "off") return Either.right(null)
  const match = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(trimmed)
  return match === null
    ? Either.left(
        new UsageError({
          message: `${name} must be a UTC time of day HH:MM (00:00 to 23:59) or off, got ${JSON.stringify(value)}`
        })
      )
    : Either.right({ hour: Number(match[1]), minute: Number(match[2]) })
}

/** Formats a {@link DailyTime} as `HH:MM`. */
export const formatDailyTime = (time: DailyTime): string =>
  `${String(time.hour).padStart(2, "0")}:${String(time.minute).padStart(2, "0")}`

/**
 * The decimation tiers from `--decimation-tiers` (`flag`), else `DASHSTREAM_DECIMATION_TIERS`, else the contract's
 * default `5m:48h,1h:14d,1d:90d` (section 9). The form is `<bucket width>:<minimum age>,...`, finest first (see
 * `parsePolicy`); a bad value is a {@link UsageError} naming the flag or variable and the offending tier.
 */
export const decimationPolicy = (flag: string | undefined, env: Env): Either.Either<TierPolicy, UsageError> =>
  load(tiers, { "decimation-tiers": flag }, env)

/**
 * The base path the view URLs `dashboards create` prints start with: `--base-path` (`flag`), else
 * `DASHSTREAM_BASE_PATH`, else `""` (docs/api.md section 16, as `serve` reads it). A bad value is a {@link UsageError}.
 */
export const basePath = (flag: string | undefined, env: Env): Either.Either<string, UsageError> =>
  load(basePathSetting, { "base-path": flag }, env)

// Date, optional time to the minute, second or fraction, and a zone (required with a time: local time would make
// the pass depend on the machine's time zone).
const ISO_TIME = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}(?::\d{2})?)(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2}))?$/i

/**
 * Parses the `--now` of `decimate`: an ISO 8601 time with a zone, such as `2024-01-10T03:00:00Z` or
 * `2024-01-10T04:00:00.5+01:00`, or a date alone (midnight UTC), to microseconds since the UNIX epoch (digits past
 * the microsecond are dropped). Fails with a {@link UsageError} for anything else or a time outside 1970 to 2106.
 */
export const parseNow = (value: string): Either.Either<Micros, UsageError> => {
  const bad = () =>
    Either.left(
      new UsageError({
        message: `--now must be an ISO 8601 time with a zone, such as 2024-01-10T03:00:00Z, got ${JSON.stringify(value)}`
      })
    )
  const match = ISO_TIME.exec(value.trim())
  if (match === null) return bad()
  const [, date, time, fraction, zone] = match
  const millis = Date.parse(time === undefined ? `${date}T00:00:00Z` : `${date}T${time}${zone!.toUpperCase()}`)
  const fractionMicros = fraction === undefined ? 0 : Number(fraction.padEnd(6, "0").slice(0, 6))
  const total = millis * 1000 + fractionMicros
  if (!Number.isSafeInteger(total) || total < 0 || total > MAX_SECONDS * 1_000_000) return bad()
  return Either.right(micros(total))
}

/** One source of a CSP source list: a keyword, `*`, a scheme (`https:`) or a host with optional scheme, port, path. */
const cspSource =
  /^(?:'self'|'none'|\*|[a-z][a-z0-9+.-]*:|(?:[a-z][a-z0-9+.-]*:\/\/)?(?:\*|(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*)(?::(?:\d{1,5}|\*))?(?:\/[a-z0-9\-._~!$&()*+=:@%/]*)?)$/i

/**
 * Parses `--frame-ancestors` (or `DASHSTREAM_FRAME_ANCESTORS`, named by `name`): the CSP `frame-ancestors` source
 * list of the dashboard page, such as `'self'`, `'none'`, `*` or `'self' https://wiki.example.com`; its sources are
 * joined by single spaces. Refused: an empty list, `'none'` beside other sources, `self` or `none` without their
 * quotes, and anything that is not a source (a `;` or `,` would add another directive or policy to the header).
 */
export function parseFrameAncestors(value: string, name: string): Either.Either<string, string> {
  const sources = value.trim().split(/[ \t]+/)
  const bad =
    sources.some((source) => !cspSource.test(source) || /^(?:self|none)$/i.test(source)) ||
    (sources.includes("'none'") && sources.length > 1)
  return value.trim() === "" || bad
    ? Either.left(
        `${name} must be a CSP source list such as 'self' (the default), 'none', * or 'self' https://wiki.example.com ` +
          `(sources separated by spaces; 'none' alone), got ${JSON.stringify(value)}`
      )
    : Either.right(sources.join(" "))
}

function parseHost(value: string, name: string): Either.Either<string, string> {
  return isIP(value) !== 0 || /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(value)
    ? Either.right(value)
    : Either.left(
        `${name} must be an IP address or host name (for example 127.0.0.1, 0.0.0.0 or ::), got ${JSON.stringify(value)}`
      )
}

function parsePort(value: string, name: string): Either.Either<number, string> {
  const port = /^\d{1,5}$/.test(value) ? Number(value) : NaN
  return port <= 65535
    ? Either.right(port)
    : Either.left(`${name} must be a whole number from 0 to 65535 (0 picks a free port), got ${JSON.stringify(value)}`)
}

/**
 * Parses `--cors-origin` values (or `DASHSTREAM_CORS_ORIGIN`), comma-separated: each `*` or an origin as browsers
 * send it in `Origin` (`http` or `https`, a host, an optional port, nothing after: `https://example.com:8443`).
 */
function parseCorsOrigins(value: string, name: string): Either.Either<ReadonlyArray<string>, string> {
  const origins = value.split(",").map((origin) => origin.trim())
  for (const origin of origins) {
    if (origin === "*") continue
    const url = URL.canParse(origin) ? new URL(origin) : undefined
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:") || url.origin !== origin) {
      const hint = url?.origin !== undefined && url.origin !== "null" ? ` (did you mean ${url.origin}?)` : ""
      return Either.left(
        `${name} must be * or an origin such as https://example.com (scheme, host and optional port, no path or ` +
          `trailing slash), got ${JSON.stringify(origin)}${hint}`
      )
    }
  }
  return Either.right([...new Set(origins)])
}

/** The longest `--request-timeout` accepted, in seconds: an hour. */
export const maxRequestTimeout = 3600

/**
 * Parses `--request-timeout` (or `DASHSTREAM_REQUEST_TIMEOUT`, named by `name`): a whole number of seconds from 1 to
 * {@link maxRequestTimeout}.
 */
export function parseRequestTimeout(value: string, name: string): Either.Either<number, string> {
  const n = /^\d{1,4}$/.test(value.trim()) ? Number(value.trim()) : 0
  return n >= 1 && n <= maxRequestTimeout
    ? Either.right(n)
    : Either.left(
        `${name} must be a whole number of seconds from 1 to ${maxRequestTimeout} (the time to receive a whole ` +
          `request), got ${JSON.stringify(value)}`
      )
}

function parseRateLimit(value: string, name: string): Either.Either<number, string> {
  const n = /^\d{1,9}$/.test(value) ? Number(value) : 0
  return n >= 1
    ? Either.right(n)
    : Either.left(
        `${name} must be a whole number of requests per second per access key, at least 1, got ${JSON.stringify(value)}`
      )
}

const trueWords = new Set(["1", "true", "yes", "on"])
const falseWords = new Set(["0", "false", "no", "off"])

function parseBoolean(value: string, name: string): Either.Either<boolean, string> {
  const word = value.trim().toLowerCase()
  if (trueWords.has(word)) return Either.right(true)
  if (falseWords.has(word)) return Either.right(false)
  return Either.left(`${name} must be 1 or 0 (also true/false, yes/no, on/off)`)
}

const logLevels: ReadonlyMap<string, LogLevel.LogLevel> = new Map([
  ["all", LogLevel.All],
  ["trace", LogLevel.Trace],
  ["debug", LogLevel.Debug],
  ["info", LogLevel.Info],
  ["warn", LogLevel.Warning],
  ["warning", LogLevel.Warning],
  ["error", LogLevel.Error],
  ["fatal", LogLevel.Fatal],
  ["none", LogLevel.None]
])

const logLevelSetting: Config.Config<LogLevel.LogLevel> = Config.withDefault(
  setting(otherVariables.logLevel.name, (value, name) =>
    Either.fromOption(
      Option.fromNullable(logLevels.get(value.toLowerCase())),
      () => `${name} must be one of trace, debug, info, warning, error, fatal or none`
    )
  ),
  LogLevel.Info
)

/**
 * The minimum level of log lines written to stderr, from `DASHSTREAM_LOG_LEVEL` (case-insensitive: trace, debug,
 * info, warning or warn, error, fatal, none); default `info`.
 */
export const logLevel = (env: Env): Either.Either<LogLevel.LogLevel, UsageError> => load(logLevelSetting, {}, env)

const debugSetting: Config.Config<boolean> = Config.withDefault(
  setting(otherVariables.debug.name, (value) => Either.right(trueWords.has(value.toLowerCase()))),
  false
)

/** True when `DASHSTREAM_DEBUG` is set to a true word: errors then show their cause and stack trace. */
export const debug = (env: Env): boolean => Either.getOrElse(load(debugSetting, {}, env), () => false)
