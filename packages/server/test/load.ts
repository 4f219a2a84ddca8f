/**
 * Helpers for the load tests that drive real `dashstream serve` processes over loopback HTTP (multiprocess.test.ts,
 * crash.test.ts): a bounded-time JSON request, a bounded-concurrency runner, the admin calls that set up an account
 * and its widgets, and the export read. Nothing here imports server code: only the wire contract.
 */
import type { Server } from "./support.js"

/** The admin token given to every server these tests start (docs/api.md section 7). */
export const adminToken = "load-test-admin-token"

/** The environment of a server these tests start: admin API on, quiet logs. */
export const serverEnv: Record<string, string> = {
  DASHSTREAM_ADMIN_TOKEN: adminToken,
  DASHSTREAM_LOG_LEVEL: "warning"
}

/** An HTTP answer: status and parsed JSON body (the raw text when it is not JSON). */
export interface Reply {
  readonly status: number
  readonly body: unknown
}

/** The longest any single request may take (the machine is busy; a hang still ends the test in bounded time). */
export const requestTimeoutMs = 60_000

/**
 * Sends one request with a JSON body (fetch, keep-alive) and reads the whole answer, aborting after `timeoutMs`.
 * Rejects when there is no answer (connection refused or reset, timeout).
 */
export const send = async (
  method: "GET" | "POST",
  url: string,
  body?: unknown,
  options: { readonly timeoutMs?: number | undefined; readonly headers?: Record<string, string> } = {}
): Promise<Reply> => {
  const response = await fetch(url, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...options.headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(options.timeoutMs ?? requestTimeoutMs)
  })
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {
    // not JSON: keep the text for the failure message
  }
  return { status: response.status, body: parsed }
}

/** Runs `tasks` with at most `inFlight` of them running at once; resolves with their results in order. */
export const pool = async <A>(inFlight: number, tasks: ReadonlyArray<() => Promise<A>>): Promise<Array<A>> => {
  const results = new Array<A>(tasks.length)
  let next = 0
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++
      results[index] = await tasks[index]!()
    }
  }
  await Promise.all(Array.from({ length: Math.min(inFlight, tasks.length) }, worker))
  return results
}

/** Creates an account and its widgets through the admin API of the server at `url`; resolves with its access key. */
export const createAccount = async (url: string, widgets: Record<string, string>): Promise<string> => {
  const headers = { authorization: `Bearer ${adminToken}` }
  const account = await send("POST", `${url}/admin/accounts`, {}, { headers })
  if (account.status !== 201) throw new Error(`POST /admin/accounts: ${account.status} ${JSON.stringify(account.body)}`)
  const { id, accessKey } = account.body as { id: string; accessKey: string }
  for (const [streamName, type] of Object.entries(widgets)) {
    const widget = await send("POST", `${url}/admin/accounts/${id}/widgets`, { streamName, type }, { headers })
    if (widget.status !== 201) {
      throw new Error(
        `POST /admin/accounts/<id>/widgets ${streamName}: ${widget.status} ${JSON.stringify(widget.body)}`
      )
    }
  }
  return accessKey
}

/** `POST /customSend` of one point. */
export const push = (url: string, accessKey: string, streamName: string, point: unknown, timeoutMs?: number) =>
  send("POST", `${url}/customSend`, { accessKey, streamName, point }, { timeoutMs })

/** A stored entry as read back. */
export interface Entry {
  readonly ts: number
  readonly point: any
}

/** `GET /api/v2/<key>/datastream/<stream>[?since=T]`; fails unless 200 with a `data` array. */
export const read = async (url: string, accessKey: string, stream: string, since?: number): Promise<Array<Entry>> => {
  const query = since === undefined ? "" : `?since=${since}`
  const reply = await send("GET", `${url}/api/v2/${accessKey}/datastream/${encodeURIComponent(stream)}${query}`)
  const data = (reply.body as { data?: unknown } | undefined)?.data
  if (reply.status !== 200 || !Array.isArray(data)) {
    throw new Error(`read ${stream}${query}: ${reply.status} ${JSON.stringify(reply.body)}`)
  }
  return data as Array<Entry>
}

/** The first `ts` that is not strictly above the one before it, as a message, or `undefined` when all are. */
export const notStrictlyIncreasing = (entries: ReadonlyArray<Entry>): string | undefined => {
  for (let i = 1; i < entries.length; i++) {
    if (!(entries[i]!.ts > entries[i - 1]!.ts)) {
      return `entry ${i}: ts ${entries[i]!.ts} after ${entries[i - 1]!.ts} (${JSON.stringify(entries.slice(i - 1, i + 1))})`
    }
  }
  return undefined
}

/** The last lines of a server's stderr, for failure messages. */
export const stderrTail = (server: Server | undefined, lines = 30): string =>
  server === undefined ? "" : server.stderr().trimEnd().split("\n").slice(-lines).join("\n")

/** Counts of each distinct value (as its JSON text). */
export const tally = (values: ReadonlyArray<unknown>): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const value of values) {
    const key = JSON.stringify(value)
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return counts
}
