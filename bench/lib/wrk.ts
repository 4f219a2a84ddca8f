import { execFile } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"

const run = promisify(execFile)

/** One load run's figures. Latencies in milliseconds. `errors` counts socket errors, timeouts and non-2xx answers. */
export interface LoadResult {
  readonly requests: number
  readonly seconds: number
  readonly reqPerSec: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
}

/** A wrk load: a Lua `request()` body that builds each request, run with the given connections and duration. */
export interface Load {
  readonly url: string
  readonly lua: string
  readonly connections?: number
  readonly threads?: number
  readonly seconds?: number
}

const reporter = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRKJSON {\\"requests\\":%d,\\"micros\\":%d,\\"p50\\":%d,\\"p99\\":%d,\\"errors\\":%d}\\n",
    summary.requests, summary.duration, math.floor(latency:percentile(50)), math.floor(latency:percentile(99)),
    e.connect + e.read + e.write + e.timeout + e.status))
end
`

/** Runs wrk (Debian package `wrk`) against loopback and parses its summary. Fails if wrk is missing or prints no summary. */
export const wrk = async (load: Load): Promise<LoadResult> => {
  const dir = mkdtempSync(join(tmpdir(), "dashstream-wrk-"))
  const script = join(dir, "load.lua")
  writeFileSync(script, `${load.lua}\n${reporter}`)
  const { stdout, stderr } = await run(
    "wrk",
    [
      `-t${load.threads ?? 2}`,
      `-c${load.connections ?? 50}`,
      `-d${load.seconds ?? 10}s`,
      "--timeout",
      "10s",
      "-s",
      script,
      load.url
    ],
    { maxBuffer: 1 << 24 }
  )
  // wrk reports a broken script on stderr and then load-tests `GET /` instead: never take those figures.
  if (stderr.includes(script)) throw new Error(`wrk could not run the load script: ${stderr}`)
  const line = stdout.split("\n").find((l) => l.startsWith("WRKJSON "))
  if (line === undefined) throw new Error(`wrk printed no summary:\n${stdout}`)
  const r = JSON.parse(line.slice(8)) as { requests: number; micros: number; p50: number; p99: number; errors: number }
  const seconds = r.micros / 1e6
  return {
    requests: r.requests,
    seconds,
    reqPerSec: r.requests / seconds,
    p50: r.p50 / 1000,
    p99: r.p99 / 1000,
    errors: r.errors
  }
}

/**
 * A Lua `request()` that POSTs the bodies produced by the Lua expression `bodyExpr` (it may use the counter `i` and
 * anything `prelude` defines).
 */
export const postLua = (path: string, bodyExpr: string, contentType = "application/json", prelude = ""): string => `
${prelude}
local i = 0
request = function()
  i = i + 1
  return wrk.format("POST", "${path}", {["Content-Type"] = "${contentType}"}, ${bodyExpr})
end
`

/** A Lua `request()` that GETs the paths produced by the Lua expression `pathExpr` (it may use the counter `i`). */
export const getLua = (pathExpr: string): string => `
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", ${pathExpr})
end
`
