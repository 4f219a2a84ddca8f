import { readFileSync } from "node:fs"
import { join } from "node:path"
import { freePort, startProcess, stopProcess } from "./proc.js"

/**
 * A Dashstream server started for a benchmark, with one account and widgets `s0`..`s99`, `hot` (number) and `spark`
 * (sparkline), plus any the benchmark asked for.
 */
export interface Dashstream {
  readonly url: string
  readonly pid: number
  readonly accessKey: string
  readonly stop: () => Promise<void>
}

/**
 * A `bash -c` script that raises the open-files limit to `nofile` (or, when that is refused, to the hard limit) and
 * then execs its arguments (`$0 "$@"`), so the process keeps bash's pid.
 */
export const raiseNofile = (nofile: number): string =>
  `ulimit -n ${nofile} 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$0" "$@"`

/**
 * The node flags `dashstream` runs with (the repository's `pnpm dashstream`/`pnpm start` scripts, as the bin's first
 * line has them): a benchmark server runs as a user's does. Read from the root package.json's `dashstream` script.
 */
export const serverNodeFlags: ReadonlyArray<string> = (
  JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "package.json"), "utf8")) as {
    scripts: Record<string, string>
  }
).scripts["dashstream"]!.split(" ").filter((arg) => arg.startsWith("--"))

/** The admin API's bearer token of every benchmark server. */
export const adminToken = "bench-admin-token"

/**
 * Starts `dashstream serve` as a plain node process (tsx loaded in-process, so the pid measured is the server's)
 * on a free loopback port with the given `--db`, then creates an account and its widgets through the admin API.
 * `extraArgs` are passed to `serve`; `widgetType` is the type of `s0`..`s99`. `entry` replaces
 * `packages/server/src/bin.ts` (a script that ends by running it); `nofile` runs the node process under
 * `bash -c 'ulimit -n <nofile>; exec ...'` (same pid); `nodeArgs` go to node before the script; `setup: false` skips the account (a second server on a
 * database that already has it: `accessKey` is then empty); `widgets` are declared after the standard ones.
 */
export const startDashstream = async (
  root: string,
  db: string,
  options: {
    extraArgs?: ReadonlyArray<string>
    env?: NodeJS.ProcessEnv
    widgetType?: string
    streams?: number
    entry?: string
    nofile?: number
    setup?: boolean
    nodeArgs?: ReadonlyArray<string>
    widgets?: ReadonlyArray<{ readonly streamName: string; readonly type: string }>
  } = {}
): Promise<Dashstream> => {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const args = [
    ...serverNodeFlags,
    ...(options.nodeArgs ?? []),
    "--conditions=@dashstream/source",
    "--import",
    "tsx",
    options.entry ?? join(root, "packages/server/src/bin.ts"),
    "serve",
    "--db",
    db,
    "--port",
    String(port),
    ...(options.extraArgs ?? [])
  ]
  const [command, commandArgs] =
    options.nofile === undefined
      ? [process.execPath, args]
      : ["bash", ["-c", raiseNofile(options.nofile), process.execPath, ...args]]
  const child = await startProcess(command, commandArgs, async () => (await fetch(`${url}/healthz`)).ok, {
    // One process unless the benchmark says otherwise (--workers in extraArgs, or DASHSTREAM_WORKERS in env).
    env: { ...process.env, DASHSTREAM_WORKERS: "1", ...options.env, DASHSTREAM_ADMIN_TOKEN: adminToken },
    timeoutMs: 60_000
  })
  if (options.setup === false) return { url, pid: child.pid!, accessKey: "", stop: () => stopProcess(child) }
  const admin = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    if (res.status !== 201) throw new Error(`admin ${path} answered ${res.status}: ${await res.text()}`)
    return (await res.json()) as Record<string, string>
  }
  const account = await admin("/admin/accounts", { name: "bench" })
  const names = [...Array.from({ length: options.streams ?? 100 }, (_, k) => `s${k}`), "hot", "spark"]
  for (const name of names) {
    await admin(`/admin/accounts/${account["id"]}/widgets`, {
      streamName: name,
      type: name === "hot" ? "number" : name === "spark" ? "sparkline" : (options.widgetType ?? "number")
    })
  }
  for (const widget of options.widgets ?? []) await admin(`/admin/accounts/${account["id"]}/widgets`, widget)
  return { url, pid: child.pid!, accessKey: account["accessKey"]!, stop: () => stopProcess(child) }
}
