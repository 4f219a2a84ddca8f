/**
 * Line protocol parser micro-benchmark (docs/api.md section 13.1): how many lines and field values per second
 * `parseLineProtocol` reads, on one core, for
 *
 * - `1-field`: 1,000 lines of one float field, no tags, a nanosecond timestamp (`sensor value=21.5 1700000000...`);
 * - `telegraf`: 1,000 lines shaped like Telegraf's `cpu` input: two tags, ten float fields, a nanosecond timestamp;
 * - `lp`: the body of the push benchmark's `lp` scenario (`cpu,cpu=cpuN,host=web1 usage_idle=<v> <ns>`, 10 series;
 *   always 1,000 lines, whatever `--lines`);
 *
 * each also as UTF-8 bytes decoded to a string first and parsed with its bytes (what the HTTP lane does with a body:
 * an ASCII body is scanned over its bytes), and as a whole `decodeLineProtocol` request of those bytes with every
 * part decoded for a line-graph stream (the whole pure part of a write, every stream declared). "parse (string)" is
 * a string alone, which the parser encodes first. Each case runs for `--seconds` (default 2) after a warm-up; the figure is the best of 5 rounds,
 * per second of the process's CPU time (`process.cpuUsage`, garbage collection threads included) rather than of the
 * clock: on a shared machine the clock also counts the time the neighbours run.
 *
 * Usage: pnpm bench:lineprotocol [--seconds 2] [--lines 1000]
 */
import { parseArgs } from "node:util"
import { decodeLineProtocol, defaultLimits, type LineBatch, parseLineProtocol } from "@dashstream/core"
import { Either } from "effect"
import { cpuFields, lineBody } from "../push/lineProtocol.js"

const { values } = parseArgs({
  options: { seconds: { type: "string", default: "2" }, lines: { type: "string", default: "1000" } }
})
const seconds = Number(values.seconds)
const lineCount = Number(values.lines)
const t0 = 1_700_000_000_000_000_000n

const oneField = Array.from(
  { length: lineCount },
  (_, i) => `sensor value=${(20 + (i % 100) / 8).toFixed(3)} ${t0 + BigInt(i) * 10_000_000_000n}`
).join("\n")

const telegraf = Array.from({ length: lineCount }, (_, i) => {
  const cpu = `cpu${i % 8}`
  const fields = cpuFields.map((f, k) => `${f}=${((i * 7 + k * 13) % 1000) / 10 + 0.012345678901}`).join(",")
  return `cpu,cpu=${cpu},host=web1 ${fields} ${t0 + BigInt(Math.floor(i / 8)) * 10_000_000_000n}`
}).join("\n")

const parse = (body: string, bytes?: Uint8Array): LineBatch => {
  const result = parseLineProtocol(body, { precision: "ns", maxFieldValues: 100_000, bytes })
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right
}

/** The pure part of a write: the body as an `IngestRequest`, then every part decoded as a line-graph's entry. */
const decodeAll = (body: string, bytes?: Uint8Array): number => {
  const request = Either.getOrThrow(decodeLineProtocol(body, "key", "ns", bytes))
  let decoded = 0
  for (const part of request.parts) {
    if (Either.isRight(request.decode("line-graph", part.value, part.path, defaultLimits))) decoded++
  }
  return decoded
}

/** The process's CPU time so far (user and system, every thread), in seconds. */
const cpuSeconds = (): number => {
  const { system, user } = process.cpuUsage()
  return (user + system) / 1e6
}

/** Runs `f` for `seconds` after a warm-up, 5 rounds; returns the best round's calls per second of CPU time. */
const callsPerSecond = (f: () => unknown): number => {
  const deadline = performance.now() + 300
  while (performance.now() < deadline) f()
  const rounds: Array<number> = []
  for (let r = 0; r < 5; r++) {
    let calls = 0
    const cpuStart = cpuSeconds()
    const end = performance.now() + (seconds * 1000) / 5
    while (performance.now() < end) {
      f()
      calls++
    }
    rounds.push(calls / (cpuSeconds() - cpuStart))
  }
  return Math.max(...rounds)
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US")

console.log(`node ${process.version}, ${lineCount} lines per body, ${seconds} s per case`)
console.log("body      case                         bytes      lines/s        field values/s   CPU µs/body")
for (const [name, body] of [
  ["1-field", oneField],
  ["telegraf", telegraf],
  ["lp", lineBody("lp", 1_700_000_000)]
] as const) {
  const bytes = Buffer.from(body, "utf8")
  const fieldsPerBody = parse(body).size
  const linesPerBody = body.split("\n").filter((line) => line !== "").length
  const cases: Array<[string, () => unknown]> = [
    ["parse (string)", () => parse(body)],
    ["decode UTF-8 + parse", () => parse(bytes.toString("utf8"), bytes)],
    ["request + decode every part", () => decodeAll(bytes.toString("utf8"), bytes)]
  ]
  for (const [label, f] of cases) {
    const perSecond = callsPerSecond(f)
    console.log(
      `${name.padEnd(9)} ${label.padEnd(30)} ${String(bytes.length).padStart(7)} ${fmt(perSecond * linesPerBody).padStart(13)} ${fmt(perSecond * fieldsPerBody).padStart(20)} ${fmt(1e6 / perSecond).padStart(13)}`
    )
  }
}
