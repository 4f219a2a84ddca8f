/**
 * What the live benchmark's parts share: the subscribers' child processes (`clients.ts`), open-loop pushes whose
 * point is their send time, and readings of a process from /proc.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { raiseNofile } from "../lib/dashstream.js"
import { type Histogram, mergeHistograms, percentileOf } from "./histogram.js"

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The machine's monotonic clock in microseconds (the clock `clients.ts` times arrivals with). */
export const nowUs = () => Number(process.hrtime.bigint() / 1000n)

/** A process's `Max open files` soft limit, from /proc. */
export const openFilesLimit = (pid: number | "self"): string =>
  /Max open files\s+(\S+)/.exec(readFileSync(`/proc/${pid}/limits`, "utf8"))?.[1] ?? "?"

/** A process's resident set size in KiB (`VmRSS`). */
export const rssKiB = (pid: number): number =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1])

/** A process's CPU time (user + system) in seconds, from /proc/<pid>/stat (clock ticks of 1/100 s). */
export const cpuSeconds = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/**
 * A process's time spent waiting on a run queue (runnable, but no CPU free for it), in seconds, summed over its
 * threads (`/proc/<pid>/task/<tid>/schedstat`, second field, nanoseconds): how much the machine's other work delayed it.
 */
export const runQueueWaitSeconds = (pid: number): number => {
  let ns = 0
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[1])
    } catch {
      // The thread ended meanwhile.
    }
  }
  return ns / 1e9
}

/** One subscribers' process (`clients.ts`) and its IPC commands. */
export interface Clients {
  readonly pid: number
  readonly ask: <A>(command: Record<string, unknown>) => Promise<A>
  readonly stop: () => void
}

/** Starts a subscribers' process under an open-files limit of `nofile`; resolves once it answers. */
export const startClients = async (nofile: number): Promise<Clients> => {
  const child: ChildProcess = spawn(
    "bash",
    [
      "-c",
      raiseNofile(nofile),
      process.execPath,
      "--conditions=@dashstream/source",
      "--import",
      "tsx",
      join(import.meta.dirname, "clients.ts")
    ],
    { stdio: ["ignore", "inherit", "inherit", "ipc"] }
  )
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve)
    child.once("error", reject)
  })
  let pending: ((value: unknown) => void) | undefined
  child.on("message", (m) => {
    const p = pending
    pending = undefined
    p?.(m)
  })
  child.on("exit", (code) => {
    if (pending !== undefined) throw new Error(`the subscribers' process exited with ${code}`)
  })
  const ask = <A>(command: Record<string, unknown>): Promise<A> =>
    new Promise((resolve) => {
      pending = resolve as (value: unknown) => void
      child.send(command)
    })
  // The first answer also tells that tsx has loaded the script.
  await ask({ cmd: "stats" })
  return { pid: child.pid!, ask, stop: () => void child.kill("SIGTERM") }
}

/** What `clients.ts` answers to `results`, merged over its processes. */
export interface Arrivals {
  readonly n: number
  readonly missing: number
  readonly extra: number
  readonly disorder: number
  readonly p50: number
  readonly p99: number
  readonly max: number
}

/** Several subscribers' processes used as one: subscribers are dealt round-robin, results merged. */
export interface ClientPool {
  readonly pids: ReadonlyArray<number>
  /** Opens one subscriber per path at `base`; fails unless every one answered 200. */
  readonly open: (base: string, paths: ReadonlyArray<string>, concurrency: number) => Promise<void>
  readonly measure: (fromUs: number) => Promise<void>
  readonly results: (expected: number) => Promise<Arrivals>
  readonly close: () => Promise<void>
  /** The processes' CPU time (seconds), summed. */
  readonly cpu: () => number
  readonly stop: () => void
}

export const clientPool = async (count: number, nofile: number): Promise<ClientPool> => {
  const all = await Promise.all(Array.from({ length: count }, () => startClients(nofile)))
  const each = <A>(command: (i: number) => Record<string, unknown>) =>
    Promise.all(all.map((c, i) => c.ask<A>(command(i))))
  return {
    pids: all.map((c) => c.pid),
    open: async (base, paths, concurrency) => {
      const answers = await each<{ opened: number; statuses: Record<string, number> }>((i) => ({
        cmd: "open",
        base,
        paths: paths.filter((_, k) => k % all.length === i),
        concurrency: Math.ceil(concurrency / all.length)
      }))
      const opened = answers.reduce((s, a) => s + a.opened, 0)
      if (opened !== paths.length) {
        throw new Error(`opened ${opened} of ${paths.length}: ${JSON.stringify(answers.map((a) => a.statuses))}`)
      }
    },
    measure: async (from) => void (await each(() => ({ cmd: "measure", from }))),
    results: async (expected) => {
      const rs = await each<Omit<Arrivals, "p50" | "p99"> & { histogram: Histogram }>(() => ({
        cmd: "results",
        expected
      }))
      const h = mergeHistograms(rs.map((r) => r.histogram))
      const sum = (f: (r: (typeof rs)[number]) => number) => rs.reduce((s, r) => s + f(r), 0)
      return {
        n: sum((r) => r.n),
        missing: sum((r) => r.missing),
        extra: sum((r) => r.extra),
        disorder: sum((r) => r.disorder),
        p50: percentileOf(h, 50),
        p99: percentileOf(h, 99),
        max: Math.max(...rs.map((r) => (Number.isNaN(r.max) ? 0 : r.max)))
      }
    },
    close: async () => void (await each(() => ({ cmd: "close" }))),
    cpu: () => all.reduce((s, c) => s + cpuSeconds(c.pid), 0),
    stop: () => all.forEach((c) => c.stop())
  }
}

/**
 * Pushes `rate` points per second for `seconds` to `url`'s `/customSend`, open loop, each point its send time
 * ({@link nowUs}); push `i` goes to `streamOf(i)`. Resolves with [sent, failed] once every push was answered.
 */
export const pushSteadily = async (
  url: string,
  accessKey: string,
  rate: number,
  seconds: number,
  streamOf: (i: number) => string = () => "hot"
): Promise<[number, number]> => {
  const total = Math.round(rate * seconds)
  const start = performance.now()
  const inFlight: Array<Promise<boolean>> = []
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    const body = JSON.stringify({ accessKey, streamName: streamOf(i), point: nowUs() })
    inFlight.push(
      fetch(`${url}/customSend`, { method: "POST", body }).then(
        async (res) => {
          await res.arrayBuffer()
          return res.ok
        },
        () => false
      )
    )
  }
  const oks = await Promise.all(inFlight)
  return [total, oks.filter((ok) => !ok).length]
}
