/**
 * Startup benchmark: how long `dashstream` takes, run as installed (`node packages/server/bundle/bin.js`,
 * the package's `bin`, plain node, no tsx), over `--runs` runs each (default 7), printing the median, minimum and maximum wall time:
 * - `help`: until the process has exited (target <= 0.5 s);
 * - `accounts create` on a migrated SQLite database: until the process has exited (target <= 1 s);
 * - `serve` on a migrated SQLite database: until it prints `Dashstream listening on` (target <= 2 s); it is then
 *   stopped with SIGTERM. Once with `--workers 1` (one process) and once with `--workers 2` (a primary and two
 *   workers, listening once both do).
 * With `--tsx` it runs the TypeScript source through tsx instead (`node --import tsx packages/server/src/bin.ts`),
 * for comparison with how the CLI used to start; `--unbundled` runs the compiled `dist/bin.js` without the bundle (how
 * it started before the bundle); `--root DIR` measures the checkout at DIR instead of this one (an
 * older commit, say).
 *
 * Wall time includes whatever else the machine is doing: the load average is printed beside the figures. Run it on
 * an otherwise idle machine for figures worth comparing. The build must be current (`pnpm build`); it checks.
 *
 * Usage: pnpm bench:startup [--runs 7] [--tsx | --unbundled] [--root DIR]
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { assertBuilt, repoRoot } from "../../test/build.js"

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "7" },
    tsx: { type: "boolean", default: false },
    unbundled: { type: "boolean", default: false },
    root: { type: "string", default: repoRoot }
  }
})
const runs = Number(values.runs)
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer (got ${values.runs})`)

const command: ReadonlyArray<string> = values.tsx
  ? ["--conditions=@dashstream/source", "--import", "tsx", join(values.root, "packages/server/src/bin.ts")]
  : [join(values.root, values.unbundled ? "packages/server/dist/bin.js" : "packages/server/bundle/bin.js")]
if (!values.tsx && values.root === repoRoot) assertBuilt()

const dir = mkdtempSync(join(tmpdir(), "dashstream-bench-startup-"))
const db = `sqlite:${join(dir, "bench.db")}`
const env = { ...process.env, DASHSTREAM_LOG_LEVEL: "none" }

/** Runs `dashstream ...args` to its end; resolves with the wall time in seconds. Rejects on a non-zero exit. */
const timeToExit = (args: ReadonlyArray<string>): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [...command, ...args], {
      cwd: values.root,
      env,
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => {
      const seconds = (performance.now() - started) / 1000
      if (code === 0) resolve(seconds)
      else reject(new Error(`dashstream ${args.join(" ")} exited with ${code}: ${stderr}`))
    })
  })

/**
 * Starts `dashstream serve --workers <workers>`; resolves with the wall time in seconds until it prints its listening
 * line (with several workers: once every worker listens).
 */
const timeToListen = (workers: number) => (): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const args = ["serve", "--port", "0", "--decimate-at", "off", "--workers", String(workers), "--db", db]
    const child = spawn(process.execPath, [...command, ...args], {
      cwd: values.root,
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    let listened: number | undefined
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
      if (listened === undefined && stdout.includes("Dashstream listening on")) {
        listened = (performance.now() - started) / 1000
        child.kill("SIGTERM")
      }
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => {
      if (listened !== undefined && code === 0) resolve(listened)
      else reject(new Error(`serve ended (code ${code}) before listening or did not stop cleanly: ${stderr}`))
    })
  })

const stats = (samples: ReadonlyArray<number>) => {
  const sorted = [...samples].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]! }
}

const measure = async (name: string, target: number, once: () => Promise<number>) => {
  await once() // warm the file system cache; not counted
  const samples: Array<number> = []
  for (let i = 0; i < runs; i++) samples.push(await once())
  const { median, min, max } = stats(samples)
  const verdict = median <= target ? "ok" : "OVER TARGET"
  console.log(
    `${name.padEnd(36)} median ${median.toFixed(2)} s  (min ${min.toFixed(2)}, max ${max.toFixed(2)}; ` +
      `target <= ${target} s: ${verdict})`
  )
  return median <= target
}

try {
  console.log(
    `dashstream startup (${values.root}), ${values.tsx ? "source through tsx" : values.unbundled ? "built dist/ with plain node" : "the bundled command with plain node"}, ` +
      `${runs} runs each; ` +
      `node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(2)}`
  )
  await timeToExit(["migrate", "--db", db])
  const results = [
    await measure("help", 0.5, () => timeToExit(["help"])),
    await measure("accounts create (migrated SQLite)", 1, () =>
      timeToExit(["accounts", "create", "--name", "bench", "--db", db])
    ),
    await measure("serve until listening (migrated SQLite)", 2, timeToListen(1)),
    await measure("serve --workers 2 until listening", 2, timeToListen(2))
  ]
  console.log(`load average after: ${loadavg()[0]!.toFixed(2)}`)
  if (results.includes(false)) process.exitCode = 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}
