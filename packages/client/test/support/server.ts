import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cli } from "@dashstream/server"
import { Console, Effect, Fiber } from "effect"

/**
 * The real `dashstream serve` (the CLI's own `serve` command: migrations, SQLite storage, HTTP server, admin API),
 * run in this process on 127.0.0.1 over a SQLite file, so the client is tested against exactly what users run.
 */

/** The admin token of servers started here. */
export const adminToken = "client-test-admin-token"

/** A running server. */
export interface Served {
  /** `http://127.0.0.1:PORT` */
  readonly url: string
  readonly port: number
  /** Graceful shutdown (event streams are ended, requests in flight answered, the database closed). */
  readonly stop: () => Promise<void>
}

/** A temporary directory for a SQLite file; `remove` deletes it. */
export const tempDatabase = (): { readonly file: string; readonly remove: () => void } => {
  const dir = mkdtempSync(join(tmpdir(), "dashstream-client-"))
  return { file: join(dir, "dashstream.db"), remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Starts `dashstream serve --db sqlite:<file> --port <port> ...args` and resolves once it listens. */
export const serve = async (file: string, args: ReadonlyArray<string> = [], port = 0): Promise<Served> => {
  const lines: Array<string> = []
  const waiters = new Set<() => void>()
  const base = await Effect.runPromise(Effect.console)
  const console: Console.Console = {
    ...base,
    log: (...parts: ReadonlyArray<unknown>) =>
      Effect.sync(() => {
        lines.push(parts.map(String).join(" "))
        for (const w of [...waiters]) w()
      })
  }
  const argv = ["serve", "--db", `sqlite:${file}`, "--host", "127.0.0.1", "--port", String(port)]
  // One process: this runs the CLI inside the test's own process, which cannot fork `serve --workers` workers.
  const env = {
    DASHSTREAM_ADMIN_TOKEN: adminToken,
    DASHSTREAM_LOG_LEVEL: "error",
    DASHSTREAM_DECIMATE_AT: "off",
    DASHSTREAM_WORKERS: "1"
  }
  const fiber = Effect.runFork(Cli.run([...argv, ...args], env).pipe(Effect.withConsole(console)))
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      for (const line of lines) {
        const match = /Dashstream listening on (http:\/\/\S+)/.exec(line)
        if (match !== null) {
          waiters.delete(check)
          return resolve(match[1]!.replace(/\/$/, ""))
        }
      }
    }
    waiters.add(check)
    fiber.addObserver((exit) => reject(new Error(`serve ended before listening: ${JSON.stringify(exit)}`)))
    check()
  })
  return { url, port: Number(new URL(url).port), stop: () => Effect.runPromise(Fiber.interrupt(fiber)).then(() => {}) }
}

const admin = async (url: string, method: string, path: string, body?: unknown): Promise<any> => {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return text === "" ? undefined : JSON.parse(text)
}

/** An account with its widgets (`{streamName: type}`), made through the admin API. */
export const account = async (
  url: string,
  widgets: Readonly<Record<string, string>>
): Promise<{ readonly id: string; readonly accessKey: string }> => {
  const created = await admin(url, "POST", "/admin/accounts", { name: "client-test" })
  for (const [streamName, type] of Object.entries(widgets)) {
    await admin(url, "POST", `/admin/accounts/${created.id}/widgets`, { streamName, type })
  }
  return { id: created.id, accessKey: created.accessKey }
}

/** Deletes a widget through the admin API. */
export const deleteWidget = (url: string, accountId: string, stream: string): Promise<unknown> =>
  admin(url, "DELETE", `/admin/accounts/${accountId}/widgets/${encodeURIComponent(stream)}`)

/** A raw export read (not through the client), for checking what is stored. */
export const readRaw = async (
  url: string,
  accessKey: string,
  stream: string,
  query = "?since=0"
): Promise<Array<{ ts: number; point: any }>> => {
  const res = await fetch(`${url}/api/v2/${accessKey}/datastream/${encodeURIComponent(stream)}${query}`)
  if (res.status !== 200) throw new Error(`read ${stream}: ${res.status} ${await res.text()}`)
  return ((await res.json()) as { data: Array<{ ts: number; point: any }> }).data
}
