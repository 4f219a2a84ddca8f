import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assertBuilt } from "../../test/build.js"
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
 * `POST <url><path>` of the admin API with {@link adminToken}: the created resource's JSON. Throws unless the server
 * answers 201.
 */
export const adminPost = async (url: string, path: string, body: unknown): Promise<Record<string, string>> => {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  if (res.status !== 201) throw new Error(`admin ${path} answered ${res.status}: ${await res.text()}`)
  return (await res.json()) as Record<string, string>
}

/**
 * The `dashstream` command as users run it (`pnpm start`, `pnpm dashstream`, the package's `bin`): the bundle that
 * `pnpm build` (and so `pnpm install`) writes, `packages/server/bundle/bin.js`.
 */
export const commandBundle = (root: string): string => join(root, "packages/server/bundle/bin.js")

/**
 * Starts `dashstream serve` as a plain node process (so the pid measured is the server's) on a free loopback port with
 * the given `--db`, then creates an account and its widgets through the admin API. The server is the command as users
 * run it, {@link commandBundle}, which must be built from the sources as they are (else this fails, naming what is
 * newer: run `pnpm build`); `source: true` runs `packages/server/src/bin.ts` through tsx instead (measured on `lp`
 * bodies, PostgreSQL: 8-10% more CPU per body than the bundle, measured 2026-11-27). `entry` replaces either
 * (a script that ends by running the command; a `.ts` one runs through tsx).
 * `extraArgs` are passed to `serve`; `widgetType` is the type of `s0`..`s99`; `nofile` runs the node process under
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
    source?: boolean
    nofile?: number
    setup?: boolean
    nodeArgs?: ReadonlyArray<string>
    widgets?: ReadonlyArray<{ readonly streamName: string; readonly type: string }>
  } = {}
): Promise<Dashstream> => {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const entry = options.entry ?? (options.source ? join(root, "packages/server/src/bin.ts") : commandBundle(root))
  if (entry === commandBundle(root)) assertBuilt()
  const args = [
    ...serverNodeFlags,
    ...(options.nodeArgs ?? []),
    // The sources (and a benchmark's own TypeScript entry) run through tsx, resolving the packages to their sources.
    ...(entry.endsWith(".ts") ? ["--conditions=@dashstream/source", "--import", "tsx"] : []),
    entry,
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
  const admin = (path: string, body: unknown) => adminPost(url, path, body)
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
