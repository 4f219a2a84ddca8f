/**
 * The flags of `dashstream serve` and the environment variables of the command line, declared once each (README
 * "Configuration", docs/api.md section 8.3). From {@link serveFlags} come the `util.parseArgs` options of `serve`
 * ({@link serveOptions}), the flag values' type ({@link ServeFlags}), its synopsis ({@link serveSynopsis}) and the
 * environment list of `dashstream help` ({@link environmentHelp}); `Config.ts` reads each flag with the variable and
 * default declared here. Like `Commands.ts`, this module imports nothing, so `help` starts without loading effect.
 */

/** One flag of `serve`. */
export interface ServeFlagSpec {
  /** `"string"`: the flag takes a value; `"boolean"`: it is given or not. */
  readonly type: "string" | "boolean"
  /** The flag may be given several times; its values are kept in order (its variable holds them comma-separated). */
  readonly multiple?: true
  /** What the usage text shows after the flag name: `--port 8080`, `--rate-limit N`; none for a boolean flag. */
  readonly value?: string
  /**
   * The environment variable read when the flag is not given, and its line in `dashstream help` (before `, as
   * --<flag>` and the default); none when the flag has no variable.
   */
  readonly env?: Variable
  /**
   * The value when neither the flag nor its variable is given, as text read like a given value (`Config.ts` parses it
   * with the flag's own parser); none when the setting is then off or empty.
   */
  readonly default?: string
}

/** An environment variable: its name and its line in `dashstream help`. */
export interface Variable {
  readonly name: string
  readonly help: string
}

/**
 * Every flag of `serve`, in the order of its synopsis. A new flag is one entry here, its reader in `Config.ts`
 * (`ServeConfig`), and its row in the README's and docs/api.md's tables (a test checks the rows).
 */
export const serveFlags = {
  host: { type: "string", value: "127.0.0.1", default: "127.0.0.1" },
  port: { type: "string", value: "8080", default: "8080" },
  "rate-limit": { type: "string", value: "N" },
  "log-requests": {
    type: "boolean",
    env: { name: "DASHSTREAM_LOG_REQUESTS", help: "1 to log one line per request" }
  },
  // On by default: an operator sees why a series never appears. The flag stays accepted; the variable turns it off.
  "log-skipped": {
    type: "boolean",
    env: {
      name: "DASHSTREAM_LOG_SKIPPED",
      help: "0 not to log the stream names InfluxDB line protocol writes skipped (not widgets), each at most once a minute"
    },
    default: "1"
  },
  "decimate-at": {
    type: "string",
    value: "HH:MM|off",
    env: { name: "DASHSTREAM_DECIMATE_AT", help: "daily UTC time of serve's decimation pass, HH:MM or off" },
    default: "03:00"
  },
  "decimation-tiers": {
    type: "string",
    value: "5m:48h,1h:14d,1d:90d",
    env: { name: "DASHSTREAM_DECIMATION_TIERS", help: "decimation tiers" },
    default: "5m:48h,1h:14d,1d:90d"
  },
  // One process by default, on both backends: on 2-core machines one process pushes faster than two (SQLite single
  // points 0.87x InfluxDB against 0.60x, PostgreSQL 0.48x against 0.34x: two processes' group commits wait on each
  // other's locks), while two serve more latest-entry reads; README "Several processes" says how to choose.
  workers: {
    type: "string",
    value: "N",
    env: { name: "DASHSTREAM_WORKERS", help: "processes serving HTTP" },
    default: "1"
  },
  "cors-origin": {
    type: "string",
    multiple: true,
    value: "<origin>|*",
    env: {
      name: "DASHSTREAM_CORS_ORIGIN",
      help: "origins (comma-separated) whose web pages may push, read exports and follow event streams"
    }
  },
  "no-admin": {
    type: "boolean",
    env: { name: "DASHSTREAM_ADMIN", help: "off for no admin API and no console, whatever the token" }
  },
  "frame-ancestors": {
    type: "string",
    value: "SOURCES",
    env: { name: "DASHSTREAM_FRAME_ANCESTORS", help: "sites that may frame a dashboard page, a CSP source list" },
    default: "'self'"
  },
  "base-path": {
    type: "string",
    value: "/PREFIX",
    env: { name: "DASHSTREAM_BASE_PATH", help: "path prefix every route is served under behind a reverse proxy" }
  },
  "trust-proxy": {
    type: "string",
    value: "<address or CIDR>[,...]",
    env: {
      name: "DASHSTREAM_TRUST_PROXY",
      help: "reverse proxies (addresses, CIDR ranges) whose X-Forwarded-For/-Proto are believed"
    }
  },
  "request-timeout": {
    type: "string",
    value: "SECONDS",
    env: {
      name: "DASHSTREAM_REQUEST_TIMEOUT",
      help: "seconds to receive a whole request, headers and body, before a 408"
    },
    default: "30"
  },
  demo: {
    type: "boolean",
    env: {
      name: "DASHSTREAM_DEMO",
      help: "1 to keep a demo account with a live dashboard, fed every few seconds while serve runs"
    }
  }
} as const satisfies Readonly<Record<string, ServeFlagSpec>>

/** The name of a `serve` flag without its dashes: `"rate-limit"`. */
export type ServeFlagName = keyof typeof serveFlags

/** The value `util.parseArgs` gives a flag declared as `Spec`: text, `true` for a boolean, every text if repeatable. */
type FlagValue<Spec> = Spec extends { readonly type: "boolean" }
  ? boolean
  : Spec extends { readonly multiple: true }
    ? ReadonlyArray<string>
    : string

/** The flags `serve` reads, as `util.parseArgs` returns them (absent or `undefined` when not given). */
export type ServeFlags = {
  readonly [Name in ServeFlagName]?: FlagValue<(typeof serveFlags)[Name]> | undefined
}

/** The `util.parseArgs` option of each `serve` flag: its type, and `multiple` for a repeatable one. */
export const serveOptions = Object.fromEntries(
  Object.entries(serveFlags).map(([name, spec]: [string, ServeFlagSpec]) => [
    name,
    spec.multiple === true ? { type: spec.type, multiple: true } : { type: spec.type }
  ])
) as {
  readonly [Name in ServeFlagName]: (typeof serveFlags)[Name] extends { readonly multiple: true }
    ? { readonly type: "string"; readonly multiple: true }
    : { readonly type: (typeof serveFlags)[Name]["type"] }
}

/** The usage text of `serve`'s flags: `[--host 127.0.0.1] [--port 8080] ... [--cors-origin <origin>|*]...`. */
export const serveSynopsis: string = Object.entries(serveFlags)
  .map(([name, spec]: [string, ServeFlagSpec]) => {
    const shown = spec.value === undefined ? `--${name}` : `--${name} ${spec.value}`
    return spec.multiple === true ? `[${shown}]...` : `[${shown}]`
  })
  .join(" ")

/** The environment variables that are no `serve` flag's, with their lines in `dashstream help`. */
export const otherVariables = {
  db: { name: "DASHSTREAM_DB", help: "database URL, as --db (the flag wins)" },
  adminToken: {
    name: "DASHSTREAM_ADMIN_TOKEN",
    help: "enables the admin API (/admin) for requests with Authorization: Bearer <token>"
  },
  logLevel: {
    name: "DASHSTREAM_LOG_LEVEL",
    help: "trace, debug, info (default), warning, error, fatal or none; logs go to stderr"
  },
  debug: { name: "DASHSTREAM_DEBUG", help: "1 to print the cause and stack trace of an error" }
} as const satisfies Readonly<Record<string, Variable>>

/**
 * The lines of `dashstream help`'s environment list: the variables of {@link otherVariables}, then each `serve`
 * flag's variable as `DASHSTREAM_WORKERS  processes serving HTTP (1: one process), as --workers (default 1)`.
 */
export const environmentHelp = (): ReadonlyArray<string> => {
  const line = (name: string, help: string) => `  ${name.padEnd(23)}  ${help}`
  return [
    ...Object.values(otherVariables).map((variable) => line(variable.name, variable.help)),
    ...Object.entries(serveFlags).flatMap(([flag, spec]: [string, ServeFlagSpec]) =>
      spec.env === undefined
        ? []
        : [
            line(
              spec.env.name,
              `${spec.env.help}, as --${flag}${spec.default === undefined ? "" : ` (default ${spec.default})`}`
            )
          ]
    )
  ]
}
