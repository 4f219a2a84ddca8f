import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { binArgs } from "./support/bin.js"

/** The repository root: the CLI runs from there, as `pnpm dashstream` does. */
export const root = resolve(import.meta.dirname, "../../..")

/**
 * How many processes a spawned `serve` runs (`DASHSTREAM_WORKERS`): `DASHSTREAM_TEST_WORKERS`, else 1 (the
 * one-process server, also `serve`'s default). A test's own `env` or `--workers` wins.
 */
export const testWorkers = process.env["DASHSTREAM_TEST_WORKERS"] ?? "1"

/**
 * The environment of a spawned CLI: the test's own, without any `DASHSTREAM_*` variable, plus `DASHSTREAM_WORKERS`
 * ({@link testWorkers}) and `env`.
 */
export const childEnv = (env: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("DASHSTREAM_")))
  return { ...base, DASHSTREAM_WORKERS: testWorkers, ...env }
}

/** How a finished CLI run ended. */
export interface Result {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `dashstream ...args` to completion (from the repository root, as {@link binArgs} says). With `deadlineMs`, a
 * command still running after it is killed with SIGKILL, workers included (the result's `signal`), so a command that
 * hangs fails its test instead of outliving it.
 */
export const cli = (args: ReadonlyArray<string>, env?: Record<string, string>, deadlineMs?: number): Promise<Result> =>
  new Promise((resolvePromise, reject) => {
    // With a deadline, the command runs in a process group of its own: killing the group kills its workers too.
    const detached = deadlineMs !== undefined
    const child = spawn(process.execPath, [...binArgs, ...args], { cwd: root, env: childEnv(env), detached })
    const deadline = detached ? setTimeout(() => process.kill(-child.pid!, "SIGKILL"), deadlineMs) : undefined
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code, signal) => {
      clearTimeout(deadline)
      resolvePromise({ code, signal, stdout, stderr })
    })
  })

/** A running `dashstream serve`. */
export interface Server {
  readonly child: ChildProcess
  /** `http://127.0.0.1:PORT`, from the listening line. */
  readonly url: string
  /** Everything written to stdout so far. */
  readonly stdout: () => string
  /** Everything written to stderr so far. */
  readonly stderr: () => string
  /** Resolves when the process has exited. */
  readonly exited: Promise<Result>
  /** Resolves once stdout contains `text`. */
  readonly waitForStdout: (text: string, timeoutMs?: number) => Promise<void>
}

/**
 * Starts `dashstream serve --port 0 ...args` and waits for `Dashstream listening on http://HOST:PORT`.
 * Rejects (and kills the process) if it exits first or does not listen within `timeoutMs`. `command` is how
 * `dashstream` is run: by default the bundle on this node (`binArgs`); `[bundle]` executes it by its first line. It
 * runs in `cwd`, by default the repository root.
 */
export const startServer = (
  args: ReadonlyArray<string>,
  env?: Record<string, string>,
  timeoutMs = 20_000,
  command: readonly [string, ...Array<string>] = [process.execPath, ...binArgs],
  cwd: string = root
) =>
  new Promise<Server>((resolvePromise, reject) => {
    const [program, ...programArgs] = command
    const child = spawn(program, [...programArgs, "serve", "--port", "0", ...args], {
      cwd,
      env: childEnv(env)
    })
    let stdout = ""
    let stderr = ""
    const waiters: Array<() => void> = []
    const exited = new Promise<Result>((done) =>
      child.on("close", (code, signal) => done({ code, signal, stdout, stderr }))
    )
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`serve did not listen within ${timeoutMs} ms; stderr:\n${stderr}`))
    }, timeoutMs)
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
      for (const waiter of [...waiters]) waiter()
    })
    const onListening = () => {
      const match = /Dashstream listening on (http:\/\/\S+)/.exec(stdout)
      if (match === null) return
      clearTimeout(timer)
      waiters.splice(waiters.indexOf(onListening), 1)
      resolvePromise({
        child,
        url: match[1]!.replace(/\/$/, ""),
        stdout: () => stdout,
        stderr: () => stderr,
        exited,
        waitForStdout: (text, waitMs = 10_000) =>
          new Promise<void>((ok, fail) => {
            const check = () => {
              if (!stdout.includes(text)) return false
              waiters.splice(waiters.indexOf(check), 1)
              clearTimeout(giveUp)
              ok()
              return true
            }
            const giveUp = setTimeout(() => fail(new Error(`stdout never contained ${JSON.stringify(text)}`)), waitMs)
            waiters.push(check)
            check()
          })
      })
    }
    waiters.push(onListening)
    void exited.then((result) => {
      clearTimeout(timer)
      reject(new Error(`serve exited with code ${result.code} before listening; stderr:\n${result.stderr}`))
    })
  })

/** Sends SIGTERM and resolves with how the process ended; fails if it takes longer than `timeoutMs`. */
export const stop = async (server: Server, signal: NodeJS.Signals = "SIGTERM", timeoutMs = 10_000) => {
  server.child.kill(signal)
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      server.child.kill("SIGKILL")
      reject(new Error(`serve did not exit within ${timeoutMs} ms of ${signal}`))
    }, timeoutMs)
  })
  try {
    return await Promise.race([server.exited, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** A temporary directory, removed by the returned function. */
export const tempDir = (): { readonly path: string; readonly remove: () => void } => {
  const path = mkdtempSync(join(tmpdir(), "dashstream-cli-"))
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) }
}

/** POSTs `body` as JSON and returns the status and parsed body. */
export const postJson = async (url: string, body: unknown) => {
  const response = await fetch(url, { method: "POST", body: JSON.stringify(body) })
  return { status: response.status, body: (await response.json()) as unknown }
}

/**
 * The pid of each `serve --workers` worker, from the primary's `worker N started` log lines in `stderr` (the latest
 * for each N).
 */
export const workerPids = (stderr: string): Map<string, number> => {
  const pids = new Map<string, number>()
  for (const match of stderr.matchAll(/message="worker (\d+) started" pid=(\d+)/g))
    pids.set(match[1]!, Number(match[2]))
  return pids
}
