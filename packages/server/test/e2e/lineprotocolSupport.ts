/**
 * What the line protocol suites (lineprotocol*.test.ts) share: running a client program, raw POSTs, the memory of the
 * server's process tree, a gzip bomb, and what a running InfluxDB 1.6 does with a body.
 */
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { createGzip } from "node:zlib"
import { expect } from "vitest"
import type { Influx } from "../../../../bench/push/influx.js"
import type { Account, Api } from "./harness.js"

/** Runs a program to completion; its exit code, stdout and stderr. */
export const run = (
  file: string,
  args: ReadonlyArray<string>,
  input?: string
): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    const child = execFile(file, args, { timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr })
    )
    if (input !== undefined) child.stdin?.end(input)
  })

/** The resident memory of a process and all its descendants, in bytes (Linux `/proc`). */
export const treeRss = (pid: number): number => {
  let rss = 0
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    rss += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/)) {
      if (child !== "") rss += treeRss(Number(child))
    }
  } catch {
    // The process ended meanwhile.
  }
  return rss
}

/** `bytes` of zeros, gzipped as a stream (never held inflated in this process): a gzip bomb of that size. */
export const gzipBomb = (bytes: number): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const gzip = createGzip({ level: 9 })
    const out: Array<Buffer> = []
    gzip.on("data", (d: Buffer) => out.push(d))
    gzip.on("end", () => resolve(Buffer.concat(out)))
    gzip.on("error", reject)
    const chunk = Buffer.alloc(1024 * 1024)
    let left = bytes
    const write = () => {
      while (left > 0) {
        left -= chunk.length
        if (!gzip.write(chunk)) return void gzip.once("drain", write)
      }
      gzip.end()
    }
    write()
  })

/** POSTs a raw body with node:http (exact headers, bytes as given); status, headers and text of the answer. */
export const post = (
  baseUrl: string,
  path: string,
  body: string | Buffer,
  headers: Readonly<Record<string, string>> = {}
): Promise<{ status: number; headers: Record<string, string | Array<string> | undefined>; text: string }> =>
  new Promise((resolve, reject) => {
    const url = new URL(baseUrl)
    const req = httpRequest(
      { host: url.hostname, port: Number(url.port), method: "POST", path, headers, agent: false },
      (res) => {
        const parts: Array<Buffer> = []
        res.on("data", (d: Buffer) => parts.push(d))
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString() })
        )
      }
    )
    req.on("error", reject)
    req.end(body)
  })

/** A timestamp in seconds (2023-11-14T22:13:20Z). */
export const T0 = 1_700_000_000

/** An InfluxQL query's first result's series (none: `[]`). */
export const influxQuery = async (
  influx: Influx,
  db: string,
  q: string
): Promise<Array<{ name?: string; values: Array<Array<string>> }>> => {
  const r = await fetch(`${influx.url}/query?db=${db}&q=${encodeURIComponent(q)}`, { method: "POST" })
  expect(r.status, q).toBe(200)
  const json = (await r.json()) as {
    results: Array<{ series?: Array<{ name?: string; values: Array<Array<string>> }> }>
  }
  return json.results[0]!.series ?? []
}

/**
 * What InfluxDB does with a body written to a fresh database (`POST /write?precision=s`): `"refused"` or the streams of
 * the fields it stored, `<measurement>.<field key>{<tag key>=<tag value>,...}`, read back with `SHOW FIELD KEYS` and
 * `SHOW TAG VALUES` (a measurement's one series); `measurements` is what `SHOW MEASUREMENTS` lists.
 */
export const influxOutcome = async (
  influx: Influx,
  db: string,
  body: string
): Promise<{ outcome: Array<string> | "refused"; measurements: Array<string> }> => {
  await influxQuery(influx, "", `CREATE DATABASE "${db}"`)
  const r = await fetch(`${influx.url}/write?db=${db}&precision=s`, { method: "POST", body })
  expect([204, 400], await r.text()).toContain(r.status)
  const measurements = (await influxQuery(influx, db, "SHOW MEASUREMENTS")).flatMap((m) => m.values.map((v) => v[0]!))
  if (r.status === 400) return { outcome: "refused", measurements }
  const tags = await influxQuery(influx, db, "SHOW TAG VALUES WITH KEY =~ /.*/")
  const streams: Array<string> = []
  for (const m of await influxQuery(influx, db, "SHOW FIELD KEYS")) {
    const pairs = (tags.find((t) => t.name === m.name)?.values ?? []).map(([k, v]) => `${k}=${v}`).sort()
    for (const [field] of m.values)
      streams.push(`${m.name}.${field}${pairs.length === 0 ? "" : `{${pairs.join(",")}}`}`)
  }
  return { outcome: streams, measurements }
}

// The 2.x client logs every failed write to the console; the tests look at the errors themselves.

/** An account with line protocol streams of every writable kind, named `<prefix>.<measurement>.<field>{tags}`. */
export const lineProtocolAccount = (api: Api, prefix: string): Promise<Account> =>
  api.setup({
    [`${prefix}.usage_idle{cpu=cpu0,host=web1}`]: "line-graph",
    [`${prefix}.load`]: "number",
    [`${prefix}.status{host=web1}`]: "label",
    [`${prefix}.deploy`]: "text-feed",
    [`${prefix}.board`]: "leaderboard"
  })
