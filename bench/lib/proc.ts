import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"

/** A free TCP port on 127.0.0.1. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })

/** Peak resident set size of a live process in MiB (`VmHWM` from /proc), or NaN when it cannot be read. */
export const peakRssMiB = (pid: number): number => {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return m ? Number(m[1]) / 1024 : NaN
  } catch {
    return NaN
  }
}

/**
 * CPU time (user + system, all threads) of `pid` and of its child processes (a `serve --workers` primary and its
 * workers), in microseconds; from `/proc/<pid>/stat`, in clock ticks of 10 ms. A process gone counts 0.
 */
export const treeCpuMicros = (pid: number): number => {
  let children: Array<number> = []
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    // no children file: just the process
  }
  let ticks = 0
  for (const p of [pid, ...children]) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      ticks += Number(fields[11]) + Number(fields[12])
    } catch {
      // gone
    }
  }
  return ticks * 10_000
}

/** Current resident set size of a live process in MiB (`VmRSS`), or NaN. */
export const rssMiB = (pid: number): number => {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return m ? Number(m[1]) / 1024 : NaN
  } catch {
    return NaN
  }
}

/** Starts a process and resolves once `ready()` succeeds (polled every 100 ms, up to `timeoutMs`). */
export const startProcess = async (
  command: string,
  args: ReadonlyArray<string>,
  ready: () => Promise<boolean>,
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number; quiet?: boolean } = {}
): Promise<ChildProcess> => {
  const child = spawn(command, args, {
    env: options.env ?? process.env,
    stdio: ["ignore", options.quiet === false ? "inherit" : "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000)
  })
  const deadline = Date.now() + (options.timeoutMs ?? 30_000)
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${command} exited with ${child.exitCode}:\n${stderr}`)
    if (await ready().catch(() => false)) return child
    await new Promise((r) => setTimeout(r, 100))
  }
  child.kill("SIGKILL")
  throw new Error(`${command} did not become ready:\n${stderr}`)
}

/** Sends SIGTERM and waits for the process to exit (SIGKILL after `graceMs`). */
export const stopProcess = (child: ChildProcess, graceMs = 10_000): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill("SIGTERM")
  })

/** True when `cmd` is on the PATH. */
export const hasCommand = (cmd: string): boolean => {
  try {
    execFileSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/** Installs Debian packages with apt-get when their commands are missing (the benchmark's peers and load tool). */
export const ensureDebianPackages = (packages: ReadonlyArray<{ command: string; pkg: string }>): void => {
  const missing = packages.filter((p) => !hasCommand(p.command)).map((p) => p.pkg)
  if (missing.length === 0) return
  console.error(`installing ${missing.join(", ")} from Debian's packages ...`)
  execFileSync(
    "sh",
    ["-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq " + missing.join(" ")],
    {
      stdio: "inherit"
    }
  )
}
