/**
 * CPU profile of one push scenario: starts `dashstream serve --workers 1` on SQLite (or, with `--backend postgres`, on a
 * fresh database of the local PostgreSQL server) under `node --cpu-prof`, loads it
 * with wrk (2 threads, 50 connections) for `--seconds`, stops it (the profile is written on exit) and prints where
 * the server's busy time went (self time, idle excluded), by category and by function. The profile includes the
 * server's start (module loading through tsx: `esm/*`, `cjs/*` frames), a few percent of a 10-second run.
 *
 * Usage: pnpm bench:profile [--scenario single|delta|multi|spark|latest|lp|telegraf] [--backend sqlite|postgres] [--seconds 10]
 *   [--top 25] [--out DIR] [--bundle]
 *
 * `--bundle` profiles the command's bundle (`packages/server/bundle/bin.js`, as `pnpm start` runs it; build it first)
 * instead of the sources through tsx: the profile's line numbers are then the bundle's, one statement per line.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { startDashstream } from "../lib/dashstream.js"
import { getLua, postLua, wrk } from "../lib/wrk.js"
import { declaredStreams, linesLua } from "./lineProtocol.js"

const { values } = parseArgs({
  options: {
    scenario: { type: "string", default: "single" },
    backend: { type: "string", default: "sqlite" },
    seconds: { type: "string", default: "10" },
    top: { type: "string", default: "25" },
    out: { type: "string" },
    bundle: { type: "boolean", default: false },
    streams: { type: "string", default: "100" }
  }
})
// How many streams `single` and `latest` spread over (`s0`..).
const streams = Number(values.streams)
const root = join(import.meta.dirname, "..", "..")
const out = values.out ?? mkdtempSync(join(tmpdir(), "dashstream-prof-"))
if (values.backend !== "sqlite" && values.backend !== "postgres") throw new Error(`unknown backend ${values.backend}`)
const profiled = async (db: string) => {
  const ds = await startDashstream(root, db, {
    nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${out}`],
    streams,
    widgets: declaredStreams.map((streamName) => ({ streamName, type: "sparkline" })),
    ...(values.bundle ? {} : { source: true })
  })
  try {
    const result = await load(ds.url, ds.accessKey)
    // Calls (pushes) per group commit over the run, from the server's own histogram.
    const metrics = await (await fetch(`${ds.url}/metrics`)).text()
    const sum = Number(/^dashstream_group_commit_calls_sum (\S+)/m.exec(metrics)?.[1])
    const count = Number(/^dashstream_group_commit_calls_count (\S+)/m.exec(metrics)?.[1])
    groups = `${count} group commits, ${(sum / count).toFixed(1)} calls per group`
    return result
  } finally {
    await ds.stop()
  }
}
const load = async (url: string, key: string) => {
  const multi = `local function multi(i)
  local parts = {}
  for k = 0, 99 do parts[#parts + 1] = '{"streamName":"s' .. k .. '","point":' .. i .. '}' end
  return '{"accessKey":"${key}","streams":[' .. table.concat(parts, ",") .. ']}'
end`
  const spark = `local function spark(i)
  local parts = {}
  for k = 0, 999 do parts[#parts + 1] = '{"number":' .. k .. ',"timestamp":' .. (1000000 + i * 1000 + k) .. '}' end
  return '{"accessKey":"${key}","streamName":"spark","point":[' .. table.concat(parts, ",") .. ']}'
end`
  const lua: Record<string, string> = {
    single: postLua(
      "/customSend",
      `'{"accessKey":"${key}","streamName":"s' .. (i % ${streams}) .. '","point":' .. i .. '}'`
    ),
    delta: postLua("/customSend", `'{"accessKey":"${key}","streamName":"hot","point":{"delta":1}}'`),
    multi: postLua("/customSend", "multi(i)", "application/json", multi),
    spark: postLua("/customSend", "spark(i)", "application/json", spark),
    latest: getLua(`"/api/v2/${key}/datastream/s" .. (i % ${streams})`),
    lp: postLua(`/write?db=x&p=${key}`, "lines(i)", "text/plain", linesLua("lp")),
    telegraf: postLua(`/write?db=x&p=${key}`, "lines(i)", "text/plain", linesLua("telegraf"))
  }
  const script = lua[values.scenario]
  if (script === undefined) throw new Error(`unknown scenario ${values.scenario}`)
  return wrk({ url, lua: script, seconds: Number(values.seconds) })
}
let result: Awaited<ReturnType<typeof wrk>> | undefined
let groups = ""
if (values.backend === "sqlite") {
  result = await profiled(`sqlite:${join(mkdtempSync(join(tmpdir(), "dashstream-bench-")), "bench.db")}`)
} else {
  const { withTestDatabase } = await import("../lib/postgres.js")
  await withTestDatabase(async (db) => {
    result = await profiled(db)
  })
}
console.log(
  `${values.scenario} on ${values.backend}: ${result!.reqPerSec.toFixed(0)} req/s, p99 ${result!.p99.toFixed(1)} ms, errors ${result!.errors}`
)
// The main thread's profile is the largest (the page reader thread, if started, writes one of its own).
const file = readdirSync(out)
  .filter((f) => f.endsWith(".cpuprofile"))
  .map((f) => join(out, f))
  .sort((a, b) => readFileSync(b).length - readFileSync(a).length)[0]!
console.log(groups)
console.log(file)

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string }
}
const profile = JSON.parse(readFileSync(file, "utf8")) as {
  nodes: Array<ProfileNode>
  samples: Array<number>
  timeDeltas: Array<number>
}
const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
const category = ({ functionName: name, url }: ProfileNode["callFrame"]): string => {
  if (name === "(garbage collector)") return "garbage collection"
  if (name === "(program)") return "V8 (program)"
  if (url.includes("better-sqlite3")) return "better-sqlite3"
  if (url.includes("/packages/")) return `dashstream ${url.split("/packages/")[1]!.split("/")[0]}`
  if (url.includes("/effect/")) return "effect runtime"
  if (url.startsWith("node:")) return `node ${url.slice(5).split("/")[0]}`
  if (url === "") return `native ${name}`
  return url.split("/").slice(-2).join("/")
}
const byCategory = new Map<string, number>()
const byFunction = new Map<string, number>()
let busy = 0
for (let i = 0; i < profile.samples.length; i++) {
  const frame = nodes.get(profile.samples[i]!)!.callFrame
  if (frame.functionName === "(idle)") continue
  const t = profile.timeDeltas[i] ?? 0
  busy += t
  const c = category(frame)
  byCategory.set(c, (byCategory.get(c) ?? 0) + t)
  const f = `${frame.functionName || "(anonymous)"} ${frame.url.split("/").slice(-2).join("/")}`
  byFunction.set(f, (byFunction.get(f) ?? 0) + t)
}
const top = Number(values.top)
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n| ${title} | share of busy time |\n|---|---:|`)
  for (const [k, t] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`| ${k} | ${((100 * t) / busy).toFixed(1)}% |`)
  }
}
console.log(`\nbusy ${(busy / 1e6).toFixed(2)} s of the server's main thread`)
print("category (self time)", byCategory)
print("function (self time)", byFunction)
