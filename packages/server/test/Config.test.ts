import { assert, describe, it } from "@effect/vitest"
import { Config as EffectConfig, Either, LogLevel, Redacted } from "effect"
import { defaultPolicy, formatPolicy } from "@dashstream/decimation"
import * as Config from "../src/Config.js"
import { type ServeFlagSpec, serveFlags } from "../src/ServeFlags.js"

const right = <A, E>(either: Either.Either<A, E>): A => {
  if (Either.isLeft(either)) assert.fail(`expected a value, got ${String(either.left)}`)
  return either.right
}

const leftMessage = <A, E extends { message: string }>(either: Either.Either<A, E>): string => {
  if (Either.isRight(either)) assert.fail(`expected an error, got ${JSON.stringify(either.right)}`)
  return either.left.message
}

describe("Config.databaseConfig", () => {
  it("defaults to sqlite:./data/dashstream.db", () => {
    const config = right(Config.databaseConfig(undefined, {}))
    assert.deepStrictEqual(config.database, { _tag: "Sqlite", filename: "./data/dashstream.db" })
    assert.strictEqual(config.source, "default")
  })

  it("--db beats DASHSTREAM_DB", () => {
    const config = right(Config.databaseConfig("sqlite:/tmp/a.db", { DASHSTREAM_DB: "sqlite:/tmp/b.db" }))
    assert.deepStrictEqual(config.database, { _tag: "Sqlite", filename: "/tmp/a.db" })
    assert.strictEqual(config.source, "flag")
    const fromEnv = right(Config.databaseConfig(undefined, { DASHSTREAM_DB: "sqlite:/tmp/b.db" }))
    assert.deepStrictEqual(fromEnv.database, { _tag: "Sqlite", filename: "/tmp/b.db" })
    assert.strictEqual(fromEnv.source, "env")
  })

  it("accepts postgres:// and postgresql:// URLs, kept redacted", () => {
    for (const url of ["postgres://u:p@localhost:5432/db", "postgresql://localhost/db"]) {
      const { database } = right(Config.databaseConfig(url, {}))
      assert.strictEqual(database._tag, "Postgres")
      if (database._tag === "Postgres") {
        assert.strictEqual(Redacted.value(database.url), url)
        assert.notInclude(String(database.url), "localhost")
      }
    }
  })

  it("rejects other schemes, naming the flag or variable but not the value", () => {
    assert.match(leftMessage(Config.databaseConfig("mysql://u:secret@x/db", {})), /^--db must be sqlite:<path>/)
    assert.notInclude(leftMessage(Config.databaseConfig("mysql://u:secret@x/db", {})), "secret")
    assert.match(leftMessage(Config.databaseConfig(undefined, { DASHSTREAM_DB: "x.db" })), /^DASHSTREAM_DB must be/)
    assert.match(leftMessage(Config.databaseConfig("sqlite:", {})), /needs a file path/)
    assert.match(leftMessage(Config.databaseConfig("postgres://[bad", {})), /not a valid URL/)
  })
  it("a blank DASHSTREAM_DB counts as unset; its value is trimmed and never echoed", () => {
    assert.strictEqual(right(Config.databaseConfig(undefined, { DASHSTREAM_DB: "  " })).source, "default")
    const trimmed = right(Config.databaseConfig(undefined, { DASHSTREAM_DB: " sqlite:/tmp/c.db\n" }))
    assert.deepStrictEqual(trimmed.database, { _tag: "Sqlite", filename: "/tmp/c.db" })
    const message = leftMessage(Config.databaseConfig(undefined, { DASHSTREAM_DB: "mysql://u:secret@x/db" }))
    assert.match(message, /^DASHSTREAM_DB must be sqlite:<path>.*got a mysql: URL$/)
    assert.notInclude(message, "secret")
  })

  it("a bad --db is reported even when DASHSTREAM_DB is good (only a missing flag falls back)", () => {
    assert.match(leftMessage(Config.databaseConfig("", { DASHSTREAM_DB: "sqlite:/tmp/b.db" })), /^--db must be/)
  })
})

describe("Config.serveConfig", () => {
  it("defaults: 127.0.0.1:8080, no rate limit, no admin token, no request log, decimation daily at 03:00, a worker per CPU", () => {
    assert.deepStrictEqual(right(Config.serveConfig({}, {})), {
      host: "127.0.0.1",
      port: 8080,
      rateLimit: null,
      adminToken: null,
      admin: true,
      logRequests: false,
      logSkipped: true,
      decimateAt: { hour: 3, minute: 0 },
      decimationPolicy: defaultPolicy,
      workers: 1,
      corsOrigins: [],
      frameAncestors: "'self'",
      basePath: "",
      trustProxy: null,
      requestTimeout: 30,
      demo: false
    })
  })

  it("reads every flag of ServeFlags.ts under its name, and its variable under the name declared there", () => {
    for (const [name, spec] of Object.entries(serveFlags) as ReadonlyArray<[string, ServeFlagSpec]>) {
      if (spec.type === "string") {
        const bad = spec.multiple === true ? ["\u0001bad"] : "\u0001bad"
        assert.match(leftMessage(Config.serveConfig({ [name]: bad }, {})), new RegExp(`^--${name}\\b`), name)
      }
      if (spec.env !== undefined) {
        const message = leftMessage(Config.serveConfig({}, { [spec.env.name]: "\u0001bad" }))
        assert.match(message, new RegExp(`^${spec.env.name}\\b`), spec.env.name)
      }
    }
  })

  it("request timeout: --request-timeout beats DASHSTREAM_REQUEST_TIMEOUT; whole seconds from 1 to 3600", () => {
    assert.strictEqual(right(Config.serveConfig({ "request-timeout": "5" }, {})).requestTimeout, 5)
    assert.strictEqual(
      right(Config.serveConfig({ "request-timeout": "1" }, { DASHSTREAM_REQUEST_TIMEOUT: "90" })).requestTimeout,
      1
    )
    assert.strictEqual(right(Config.serveConfig({}, { DASHSTREAM_REQUEST_TIMEOUT: "3600" })).requestTimeout, 3600)
    for (const bad of ["0", "3601", "1.5", "-1", "", "30s", "ten"]) {
      assert.match(
        leftMessage(Config.serveConfig({ "request-timeout": bad }, {})),
        /^--request-timeout must be a whole number of seconds from 1 to 3600/,
        bad
      )
    }
    assert.match(
      leftMessage(Config.serveConfig({}, { DASHSTREAM_REQUEST_TIMEOUT: "0" })),
      /^DASHSTREAM_REQUEST_TIMEOUT must be a whole number of seconds/
    )
  })

  it("base path and trusted proxies: flags beat DASHSTREAM_BASE_PATH / DASHSTREAM_TRUST_PROXY; bad values are usage errors", () => {
    assert.strictEqual(
      right(Config.serveConfig({ "base-path": "/dash" }, { DASHSTREAM_BASE_PATH: "/x" })).basePath,
      "/dash"
    )
    assert.strictEqual(right(Config.serveConfig({}, { DASHSTREAM_BASE_PATH: "/x/y" })).basePath, "/x/y")
    assert.strictEqual(right(Config.serveConfig({ "base-path": "/" }, {})).basePath, "")
    assert.match(leftMessage(Config.serveConfig({ "base-path": "/dash/" }, {})), /^--base-path must be a URL path/)
    assert.match(
      leftMessage(Config.serveConfig({}, { DASHSTREAM_BASE_PATH: "/a/../b" })),
      /^DASHSTREAM_BASE_PATH must be/
    )
    const trusted = right(Config.serveConfig({ "trust-proxy": "127.0.0.1,10.0.0.0/8" }, {})).trustProxy!
    assert.deepStrictEqual(trusted.entries, ["127.0.0.1", "10.0.0.0/8"])
    assert.isTrue(trusted.trusts("::ffff:10.9.8.7"))
    assert.deepStrictEqual(right(Config.serveConfig({}, { DASHSTREAM_TRUST_PROXY: "::1" })).trustProxy!.entries, [
      "::1"
    ])
    assert.match(leftMessage(Config.serveConfig({ "trust-proxy": "proxy.local" }, {})), /^--trust-proxy must be IP/)
    assert.deepStrictEqual(Config.startWarnings(right(Config.serveConfig({ "trust-proxy": "10.0.0.0/8" }, {}))), [])
    const [warning, ...more] = Config.startWarnings(
      right(Config.serveConfig({}, { DASHSTREAM_TRUST_PROXY: "::/0,127.0.0.1" }))
    )
    assert.match(warning!, /^--trust-proxy ::\/0 trusts every peer: any client can write X-Forwarded-For/)
    assert.deepStrictEqual(more, [])
    assert.match(leftMessage(Config.serveConfig({ "base-path": "" }, {})), /^--base-path must be a URL path/)
    assert.strictEqual(right(Config.basePath(undefined, { DASHSTREAM_BASE_PATH: "/d" })), "/d")
    assert.match(leftMessage(Config.basePath("nope", {})), /^--base-path must be/)
  })
  it("frame-ancestors: --frame-ancestors beats DASHSTREAM_FRAME_ANCESTORS; a source list, else a usage error", () => {
    const frameAncestors = (flag: string | undefined, env: string | undefined) =>
      Config.serveConfig({ "frame-ancestors": flag }, env === undefined ? {} : { DASHSTREAM_FRAME_ANCESTORS: env })
    assert.strictEqual(right(frameAncestors("'none'", "*")).frameAncestors, "'none'")
    assert.strictEqual(right(frameAncestors(undefined, "*")).frameAncestors, "*")
    assert.strictEqual(
      right(frameAncestors("  'self'   https://wiki.example.com *.example.org:8443 https: ", undefined)).frameAncestors,
      "'self' https://wiki.example.com *.example.org:8443 https:"
    )
    assert.strictEqual(
      right(frameAncestors("https://intranet.example.com/wiki/", undefined)).frameAncestors,
      "https://intranet.example.com/wiki/"
    )
    for (const bad of [
      "",
      "'self'; script-src *",
      "https://a.example.com, https://b.example.com",
      "'none' https://a.example.com",
      "self",
      "'unsafe-inline'",
      "https://a.example.com\r\nX-Evil: 1",
      "https://exa<mple.com"
    ]) {
      assert.match(leftMessage(frameAncestors(bad, undefined)), /^--frame-ancestors must be/, JSON.stringify(bad))
    }
    assert.match(leftMessage(frameAncestors(undefined, "a;b")), /^DASHSTREAM_FRAME_ANCESTORS must be/)
  })

  it("admin: --no-admin or DASHSTREAM_ADMIN=off turn it off; a bad DASHSTREAM_ADMIN is a usage error", () => {
    assert.isFalse(right(Config.serveConfig({ "no-admin": true }, {})).admin)
    assert.isFalse(right(Config.serveConfig({}, { DASHSTREAM_ADMIN: "off" })).admin)
    assert.isFalse(right(Config.serveConfig({}, { DASHSTREAM_ADMIN: "0" })).admin)
    assert.isTrue(right(Config.serveConfig({}, { DASHSTREAM_ADMIN: "on" })).admin)
    assert.isFalse(right(Config.serveConfig({ "no-admin": true }, { DASHSTREAM_ADMIN: "on" })).admin)
    assert.match(leftMessage(Config.serveConfig({}, { DASHSTREAM_ADMIN: "maybe" })), /^DASHSTREAM_ADMIN must be 1 or 0/)
  })

  it("adminSetting: a configured token; else a first-run token on a loopback address only; off when told so", () => {
    const of = (flags: Config.ServeFlags, env: Record<string, string>) =>
      Config.adminSetting(right(Config.serveConfig(flags, env)))._tag
    const token = { DASHSTREAM_ADMIN_TOKEN: "secret" }
    assert.strictEqual(of({}, {}), "FirstRun")
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "localhost", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1"]) {
      assert.strictEqual(of({ host }, {}), "FirstRun", host)
    }
    for (const host of ["0.0.0.0", "::", "10.0.0.5", "192.168.1.2", "example.com", "::ffff:10.0.0.1"]) {
      assert.strictEqual(of({ host }, {}), "Off", host)
      assert.strictEqual(of({ host }, token), "Token", host)
    }
    assert.strictEqual(of({}, token), "Token")
    const setting = Config.adminSetting(right(Config.serveConfig({}, token)))
    assert.strictEqual(setting._tag === "Token" ? Redacted.value(setting.token) : undefined, "secret")
    assert.strictEqual(of({ "no-admin": true }, token), "Off")
    assert.strictEqual(of({}, { ...token, DASHSTREAM_ADMIN: "off" }), "Off")
    assert.strictEqual(of({ "no-admin": true }, {}), "Off")
  })

  it("cors: --cors-origin (repeatable) beats DASHSTREAM_CORS_ORIGIN (comma-separated); only * or bare origins", () => {
    const origins = (flags: Config.ServeFlags, env: Config.Env = {}) =>
      right(Config.serveConfig(flags, env)).corsOrigins
    assert.deepStrictEqual(origins({ "cors-origin": ["https://a.example", "http://b.example:8080"] }), [
      "https://a.example",
      "http://b.example:8080"
    ])
    assert.deepStrictEqual(origins({ "cors-origin": ["*"] }, { DASHSTREAM_CORS_ORIGIN: "https://x.example" }), ["*"])
    assert.deepStrictEqual(origins({}, { DASHSTREAM_CORS_ORIGIN: " https://x.example, https://y.example " }), [
      "https://x.example",
      "https://y.example"
    ])
    for (const bad of ["https://a.example/", "https://a.example/path", "ftp://a.example", "a.example", ""]) {
      assert.match(
        leftMessage(Config.serveConfig({ "cors-origin": [bad] }, {})),
        /^--cors-origin must be \* or an origin such as https:\/\/example.com/,
        bad
      )
    }
    assert.match(
      leftMessage(Config.serveConfig({ "cors-origin": ["https://a.example/"] }, {})),
      /did you mean https:\/\/a.example\?/
    )
    assert.match(
      leftMessage(Config.serveConfig({}, { DASHSTREAM_CORS_ORIGIN: "x" })),
      /^DASHSTREAM_CORS_ORIGIN must be/
    )
  })

  it("workers: --workers beats DASHSTREAM_WORKERS; anything but a whole number from 1 to 1024 is a usage error", () => {
    assert.strictEqual(right(Config.serveConfig({ workers: "3" }, { DASHSTREAM_WORKERS: "5" })).workers, 3)
    assert.strictEqual(right(Config.serveConfig({}, { DASHSTREAM_WORKERS: " 5 " })).workers, 5)
    assert.strictEqual(right(Config.serveConfig({ workers: "1" }, {})).workers, 1)
    for (const bad of ["0", "-1", "1.5", "two", "", "1025", "2e1"]) {
      assert.match(
        leftMessage(Config.serveConfig({ workers: bad }, {})),
        /^--workers must be a whole number of processes from 1 to 1024/
      )
    }
    assert.match(leftMessage(Config.serveConfig({}, { DASHSTREAM_WORKERS: "0" })), /^DASHSTREAM_WORKERS must be/)
  })

  it("decimation: --decimate-at beats DASHSTREAM_DECIMATE_AT; off disables; tiers from flag or environment", () => {
    assert.deepStrictEqual(right(Config.serveConfig({ "decimate-at": "4:05" }, {})).decimateAt, { hour: 4, minute: 5 })
    assert.deepStrictEqual(right(Config.serveConfig({}, { DASHSTREAM_DECIMATE_AT: "23:59" })).decimateAt, {
      hour: 23,
      minute: 59
    })
    assert.deepStrictEqual(
      right(Config.serveConfig({ "decimate-at": "00:00" }, { DASHSTREAM_DECIMATE_AT: "off" })).decimateAt,
      { hour: 0, minute: 0 }
    )
    assert.isNull(right(Config.serveConfig({ "decimate-at": "OFF" }, {})).decimateAt)
    assert.isNull(right(Config.serveConfig({}, { DASHSTREAM_DECIMATE_AT: "off" })).decimateAt)
    const tiers = "1m:1h,1h:7d"
    assert.strictEqual(
      formatPolicy(right(Config.serveConfig({ "decimation-tiers": tiers }, {})).decimationPolicy),
      tiers
    )
    assert.strictEqual(
      formatPolicy(right(Config.serveConfig({}, { DASHSTREAM_DECIMATION_TIERS: tiers })).decimationPolicy),
      tiers
    )
    for (const bad of ["24:00", "3", "03:60", "noon", ""]) {
      assert.match(leftMessage(Config.serveConfig({ "decimate-at": bad }, {})), /^--decimate-at must be a UTC time/)
    }
    assert.match(leftMessage(Config.serveConfig({}, { DASHSTREAM_DECIMATE_AT: "9am" })), /^DASHSTREAM_DECIMATE_AT/)
    assert.match(
      leftMessage(Config.serveConfig({ "decimation-tiers": "1h:1d,5m:2d" }, {})),
      /^--decimation-tiers: invalid tier policy "1h:1d,5m:2d": tier 2/
    )
    assert.match(
      leftMessage(Config.serveConfig({}, { DASHSTREAM_DECIMATION_TIERS: "5x:1d" })),
      /^DASHSTREAM_DECIMATION_TIERS: invalid tier policy/
    )
  })

  it("reads flags and the environment", () => {
    const config = right(
      Config.serveConfig(
        { host: "0.0.0.0", port: "0", "rate-limit": "50" },
        { DASHSTREAM_ADMIN_TOKEN: "s3cret", DASHSTREAM_LOG_REQUESTS: "1" }
      )
    )
    assert.strictEqual(config.host, "0.0.0.0")
    assert.strictEqual(config.port, 0)
    assert.strictEqual(config.rateLimit, 50)
    assert.strictEqual(config.adminToken && Redacted.value(config.adminToken), "s3cret")
    assert.isTrue(config.logRequests)
    assert.isTrue(right(Config.serveConfig({ "log-requests": true }, { DASHSTREAM_LOG_REQUESTS: "0" })).logRequests)
    // --log-skipped / DASHSTREAM_LOG_SKIPPED (docs/api.md section 13.1), the same way.
    assert.isTrue(right(Config.serveConfig({ "log-skipped": true }, {})).logSkipped)
    assert.isTrue(right(Config.serveConfig({}, { DASHSTREAM_LOG_SKIPPED: "1" })).logSkipped)
    assert.isFalse(right(Config.serveConfig({}, { DASHSTREAM_LOG_SKIPPED: "0" })).logSkipped)
    assert.match(leftMessage(Config.serveConfig({}, { DASHSTREAM_LOG_SKIPPED: "maybe" })), /^DASHSTREAM_LOG_SKIPPED/)
  })

  it("rejects bad values with the flag's name and accepted forms", () => {
    assert.match(
      leftMessage(Config.serveConfig({ port: "65536" }, {})),
      /^--port must be a whole number from 0 to 65535/
    )
    assert.match(leftMessage(Config.serveConfig({ port: "80a" }, {})), /^--port/)
    assert.match(leftMessage(Config.serveConfig({ port: "-1" }, {})), /^--port/)
    assert.match(leftMessage(Config.serveConfig({ "rate-limit": "0" }, {})), /^--rate-limit must be a whole number/)
    assert.match(leftMessage(Config.serveConfig({ "rate-limit": "1.5" }, {})), /^--rate-limit/)
    assert.match(leftMessage(Config.serveConfig({ host: "not a host" }, {})), /^--host must be an IP address/)
    assert.match(leftMessage(Config.serveConfig({}, { DASHSTREAM_LOG_REQUESTS: "maybe" })), /^DASHSTREAM_LOG_REQUESTS/)
  })
  it("a bad flag is reported even when its variable is set; a blank variable counts as unset", () => {
    assert.match(
      leftMessage(Config.serveConfig({ "decimate-at": "9am" }, { DASHSTREAM_DECIMATE_AT: "04:00" })),
      /^--decimate-at must be a UTC time/
    )
    assert.match(
      leftMessage(Config.serveConfig({ "decimation-tiers": "5x:1d" }, { DASHSTREAM_DECIMATION_TIERS: "1m:1h" })),
      /^--decimation-tiers: invalid tier policy/
    )
    const blank = right(
      Config.serveConfig({}, { DASHSTREAM_DECIMATE_AT: "", DASHSTREAM_LOG_REQUESTS: " ", DASHSTREAM_ADMIN_TOKEN: "" })
    )
    assert.deepStrictEqual(
      [blank.decimateAt, blank.logRequests, blank.adminToken],
      [{ hour: 3, minute: 0 }, false, null]
    )
    assert.deepStrictEqual(right(Config.serveConfig({}, { DASHSTREAM_DECIMATE_AT: " 5:30 " })).decimateAt, {
      hour: 5,
      minute: 30
    })
  })

  it("DASHSTREAM_LOG_REQUESTS takes 1/0, true/false, yes/no, on/off in any case", () => {
    for (const word of ["1", "TRUE", "yes", "On"]) {
      assert.isTrue(right(Config.serveConfig({}, { DASHSTREAM_LOG_REQUESTS: word })).logRequests, word)
    }
    for (const word of ["0", "False", "no", "OFF"]) {
      assert.isFalse(right(Config.serveConfig({}, { DASHSTREAM_LOG_REQUESTS: word })).logRequests, word)
    }
  })

  it("the admin token stays redacted", () => {
    const { adminToken } = right(Config.serveConfig({}, { DASHSTREAM_ADMIN_TOKEN: " s3cret " }))
    assert.strictEqual(adminToken && Redacted.value(adminToken), "s3cret")
    assert.notInclude(String(adminToken), "s3cret")
    assert.notInclude(JSON.stringify(adminToken), "s3cret")
  })

  it("reports the first bad setting, in the order host, port, rate limit", () => {
    assert.match(leftMessage(Config.serveConfig({ host: "a b", port: "x", "rate-limit": "0" }, {})), /^--host/)
    assert.match(leftMessage(Config.serveConfig({ port: "x", "rate-limit": "0" }, {})), /^--port/)
  })
})

describe("Config.provider and Config.load", () => {
  it("give flags as --name (booleans as true) and the environment to any effect Config", () => {
    const config = EffectConfig.all([
      EffectConfig.string("--name"),
      EffectConfig.boolean("--json"),
      EffectConfig.integer("PORT"),
      EffectConfig.option(EffectConfig.string("--missing"))
    ])
    const [name, json, port, missing] = right(
      Config.load(config, { name: "n", json: true, other: undefined }, { PORT: "80" })
    )
    assert.deepStrictEqual([name, json, port, missing._tag], ["n", true, 80, "None"])
  })

  it("turn a ConfigError into a UsageError", () => {
    assert.match(
      leftMessage(Config.load(EffectConfig.integer("PORT"), {}, { PORT: "eighty" })),
      /^PORT: Expected an integer value but received "eighty"$/
    )
  })
})

describe("Config.debug", () => {
  it("is true for a true word, false for anything else", () => {
    assert.isTrue(Config.debug({ DASHSTREAM_DEBUG: "1" }))
    assert.isTrue(Config.debug({ DASHSTREAM_DEBUG: "Yes" }))
    assert.isFalse(Config.debug({ DASHSTREAM_DEBUG: "0" }))
    assert.isFalse(Config.debug({ DASHSTREAM_DEBUG: "maybe" }))
    assert.isFalse(Config.debug({}))
  })
})

describe("Config.parseNow", () => {
  it("reads ISO 8601 times with a zone, or a date alone (midnight UTC), to microseconds", () => {
    const at = (iso: string) => right(Config.parseNow(iso))
    assert.strictEqual(at("2024-01-10T00:00:00Z"), Date.UTC(2024, 0, 10) * 1000)
    assert.strictEqual(at("2024-01-10"), Date.UTC(2024, 0, 10) * 1000)
    assert.strictEqual(at("2024-01-10T03:30Z"), Date.UTC(2024, 0, 10, 3, 30) * 1000)
    assert.strictEqual(at("2024-01-10T04:00:00+01:00"), Date.UTC(2024, 0, 10, 3) * 1000)
    assert.strictEqual(at("2024-01-10T00:00:00.123456789Z"), Date.UTC(2024, 0, 10) * 1000 + 123_456)
    assert.strictEqual(at("1970-01-01T00:00:00Z"), 0)
  })

  it("rejects anything else as a usage error naming --now", () => {
    for (const bad of ["yesterday", "2024-01-10T00:00:00", "1704844800", "2024-13-01", "1969-12-31T23:59:59Z", ""]) {
      assert.match(leftMessage(Config.parseNow(bad)), /^--now must be an ISO 8601 time with a zone/)
    }
  })
})

describe("Config.logLevel", () => {
  it("defaults to info and accepts the level names in any case", () => {
    assert.strictEqual(right(Config.logLevel({})), LogLevel.Info)
    assert.strictEqual(right(Config.logLevel({ DASHSTREAM_LOG_LEVEL: "DEBUG" })), LogLevel.Debug)
    assert.strictEqual(right(Config.logLevel({ DASHSTREAM_LOG_LEVEL: "warn" })), LogLevel.Warning)
    assert.match(leftMessage(Config.logLevel({ DASHSTREAM_LOG_LEVEL: "loud" })), /^DASHSTREAM_LOG_LEVEL must be one of/)
  })
})
