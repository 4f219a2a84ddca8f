import {
  AccountStore,
  ChangeFeed,
  DashboardStore,
  defaultLimits,
  SessionStore,
  AlertStore,
  type StorageFailure,
  StreamStore,
  withEffectForms
} from "@dashstream/core"
import { MemoryStore } from "@dashstream/core/testing"
import { Console, Context, Effect, Exit, Layer, Logger, Scope } from "effect"
import { type HttpConfig, layer } from "../../src/index.js"

/** Switches that make the test store misbehave. */
export interface Faults {
  /** When set, `StreamStore.ping` fails with it. */
  ping: StorageFailure | undefined
  /** When set, `StreamStore.read` fails with it (once `readFaultAfter` reads have succeeded). */
  read: StorageFailure | undefined
  /** How many more reads succeed before the `read` fault takes effect (0: at once). */
  readFaultAfter: number
  /** When set, `StreamStore.write` fails with it. */
  write: StorageFailure | undefined
  /** When set, `StreamStore.writeDirect` throws it (a defect; `write` dies with it). */
  writeDefect: unknown
  /** When set, `StreamStore.write` waits for this promise before writing. */
  writeGate: Promise<void> | undefined
  /** Called when a write starts (before the gate). */
  onWrite: (() => void) | undefined
  /** Called when `StreamStore.readPage` is asked for a page (before any read fault). */
  onReadPage: (() => void) | undefined
}

/** A running test server. */
export interface TestServer {
  readonly url: string
  /** Lines written with `Console.log` while starting (the "listening" line). */
  readonly stdout: ReadonlyArray<string>
  /** Every log line (message and annotations), as text. */
  readonly logs: ReadonlyArray<string>
  readonly faults: Faults
  /** Closes the server's scope (graceful shutdown). */
  readonly close: () => Promise<void>
}

const adminToken = "test-admin-token"

/** The admin token of servers started with {@link startServer} (unless overridden). */
export const testAdminToken = adminToken

/** The in-memory stores with switchable faults. */
const faultyStores = (
  faults: Faults
): Layer.Layer<AccountStore | StreamStore | ChangeFeed | DashboardStore | SessionStore | AlertStore> =>
  Layer.effectContext(
    Effect.map(MemoryStore.make, (stores) => {
      const inner = stores.streamStore
      // The fault a read meets now, if any (counting down `readFaultAfter`).
      const readFaultNow = (): StorageFailure | undefined => {
        if (faults.read === undefined) return undefined
        if (faults.readFaultAfter > 0) {
          faults.readFaultAfter--
          return undefined
        }
        return faults.read
      }
      const readFault = <A>(read: Effect.Effect<A, StorageFailure>) =>
        Effect.suspend(() => {
          const fault = readFaultNow()
          return fault === undefined ? read : Effect.fail(fault)
        })
      // The direct forms, as an adapter writes them; `write` and `read` are derived from them.
      const streamStore: Context.Tag.Service<StreamStore> = withEffectForms({
        ...inner,
        ping: Effect.suspend(() => (faults.ping === undefined ? inner.ping : Effect.fail(faults.ping))),
        readDirect: (stream, query, done) => {
          const fault = readFaultNow()
          if (fault !== undefined) return done(fault, [])
          inner.readDirect(stream, query, done)
        },
        readPage: (stream, since, limit) =>
          Effect.suspend(() => {
            faults.onReadPage?.()
            return readFault(inner.readPage(stream, since, limit))
          }),
        readLive: (stream, query) => readFault(inner.readLive(stream, query)),
        writeDirect: (writes, now, done) => {
          faults.onWrite?.()
          if (faults.writeDefect !== undefined) throw faults.writeDefect
          if (faults.write !== undefined) return done(faults.write)
          const gate = faults.writeGate
          if (gate === undefined) return inner.writeDirect(writes, now, done)
          void gate.then(() => inner.writeDirect(writes, now, done))
        }
      })
      return Context.make(AccountStore, stores.accountStore).pipe(
        Context.add(StreamStore, streamStore),
        Context.add(ChangeFeed, stores.changeFeed),
        Context.add(DashboardStore, stores.dashboardStore),
        Context.add(SessionStore, stores.sessionStore),
        Context.add(AlertStore, stores.alertStore)
      )
    })
  )

/** Starts the real HTTP layer on an ephemeral loopback port over fresh in-memory stores. */
export const startServer = async (overrides: Partial<HttpConfig> = {}): Promise<TestServer> => {
  const config: HttpConfig = {
    host: "127.0.0.1",
    port: 0,
    adminToken,
    limits: defaultLimits,
    rateLimit: undefined,
    logRequests: false,
    ...overrides
  }
  const faults: Faults = {
    ping: undefined,
    read: undefined,
    readFaultAfter: 0,
    write: undefined,
    writeDefect: undefined,
    writeGate: undefined,
    onWrite: undefined,
    onReadPage: undefined
  }
  const stdout: Array<string> = []
  const logs: Array<string> = []
  const base = await Effect.runPromise(Effect.console)
  const console: Console.Console = {
    ...base,
    log: (...args: ReadonlyArray<unknown>) => Effect.sync(() => void stdout.push(args.map(String).join(" ")))
  }
  const logger = Logger.make(({ annotations, cause, logLevel, message }) => {
    const parts = [logLevel.label, ...(Array.isArray(message) ? message : [message]).map(String)]
    for (const [key, value] of annotations) parts.push(`${key}=${String(value)}`)
    if (cause._tag !== "Empty") parts.push(String(cause))
    logs.push(parts.join(" "))
  })
  const scope = Effect.runSync(Scope.make())
  await Effect.runPromise(
    Layer.buildWithScope(layer(config).pipe(Layer.provide(faultyStores(faults))), scope).pipe(
      Effect.withConsole(console),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
  )
  const line = stdout.find((l) => l.startsWith("Dashstream listening on "))
  if (line === undefined) throw new Error(`no listening line in ${JSON.stringify(stdout)}`)
  return {
    url: line.slice("Dashstream listening on ".length),
    stdout,
    logs,
    faults,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** Calls the admin API with the test token. */
export const admin = async (
  server: TestServer,
  method: string,
  path: string,
  body?: unknown
): Promise<{ status: number; json: any }> => {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await res.text()
  return { status: res.status, json: text === "" ? undefined : JSON.parse(text) }
}

/** Creates an account with the given widgets (`[streamName, type]`); returns its id and access key. */
export const setupAccount = async (
  server: TestServer,
  widgets: ReadonlyArray<readonly [string, string]>
): Promise<{ id: string; accessKey: string }> => {
  const account = await admin(server, "POST", "/admin/accounts", { name: "test" })
  if (account.status !== 201) throw new Error(`create account: ${account.status} ${JSON.stringify(account.json)}`)
  for (const [streamName, type] of widgets) {
    const widget = await admin(server, "POST", `/admin/accounts/${account.json.id}/widgets`, { streamName, type })
    if (widget.status !== 201) throw new Error(`create widget: ${widget.status} ${JSON.stringify(widget.json)}`)
  }
  return { id: account.json.id, accessKey: account.json.accessKey }
}

/** POSTs a raw body to `/customSend` (or `path`) with the given headers. */
export const pushRaw = (
  server: TestServer,
  body: string | Uint8Array,
  headers: Record<string, string> = {},
  path = "/customSend"
): Promise<Response> => fetch(`${server.url}${path}`, { method: "POST", headers, body })

/** POSTs a JSON push body to `/customSend` as `application/json`. */
export const push = (server: TestServer, body: unknown): Promise<Response> =>
  pushRaw(server, JSON.stringify(body), { "content-type": "application/json" })

/** Reads a stream through the export API. */
export const read = (server: TestServer, accessKey: string, streamName: string, query = ""): Promise<Response> =>
  fetch(`${server.url}/api/v2/${encodeURIComponent(accessKey)}/datastream/${encodeURIComponent(streamName)}${query}`)

/** Response status and parsed JSON body. */
export const json = async (res: Response): Promise<{ status: number; body: any; headers: Headers }> => {
  const text = await res.text()
  return { status: res.status, body: text === "" ? undefined : JSON.parse(text), headers: res.headers }
}
