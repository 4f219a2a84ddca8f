/**
 * The line protocol path without storage, two codes in one process (docs/api.md section 13.1): per body, what a write
 * does before SQLite or PostgreSQL sees it: `decodeLineProtocol` of the bytes, `writesOf` against the declared widgets
 * (each stream a sparkline), a `WritePlan` of the writes, and every planned entry's `ts`, ranked value and JSON read
 * once, as a store reads them. A is `packages/core/src` as of `--base <commit>` (copied out with `git archive` into
 * `packages/core/.bench-base/<commit>`, where `effect` resolves as for core), B this checkout; they alternate round by
 * round (A, B, A, B, ...) so a loaded machine slows both alike. Figures: CPU time per body (`process.cpuUsage`), the
 * medians and each pair's ratio B/A.
 *
 * Bodies: the push benchmark's `lp` (10 series) and `lp100` (100 series), each body its own second, 50 of them in turn.
 *
 * Usage: tsx --conditions=@dashstream/source bench/lineprotocol/ab.ts --base <commit> [--rounds 8] [--bodies 300]
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { Either } from "effect"
import { declaredStreams, type LineLoad, lineBody } from "../push/lineProtocol.js"

const { values } = parseArgs({
  options: {
    base: { type: "string" },
    rounds: { type: "string", default: "8" },
    bodies: { type: "string", default: "300" }
  }
})
if (values.base === undefined) throw new Error("--base <commit> is required")
const rounds = Number(values.rounds)
const perRound = Number(values.bodies)
const root = join(import.meta.dirname, "..", "..")

/** `packages/core/src` of `commit`, its imports of the contract package pointed at this checkout's. */
const checkoutBase = (commit: string): string => {
  const dir = join(root, "packages", "core", ".bench-base", commit)
  if (existsSync(dir)) return dir
  mkdirSync(dir, { recursive: true })
  execFileSync("tar", ["-x", "-C", dir], {
    input: execFileSync("git", ["-C", root, "archive", commit, "packages/core/src"])
  })
  const walk = (d: string): Array<string> =>
    readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : [join(d, f)]))
  const contract = join(root, "packages", "contract", "src", "index.ts")
  for (const file of walk(join(dir, "packages", "core", "src"))) {
    const text = readFileSync(file, "utf8")
    writeFileSync(file, text.replaceAll('from "@dashstream/contract"', `from "${contract}"`))
  }
  return dir
}

/** The modules of one code: its core's sources. */
interface Code {
  readonly name: string
  readonly lp: typeof import("../../packages/core/src/ingest/LineProtocolRequest.js")
  readonly push: typeof import("../../packages/core/src/usecases/Push.js")
  readonly plan: typeof import("../../packages/core/src/WritePlan.js")
  readonly core: typeof import("../../packages/core/src/index.js")
}
const load = async (name: string, src: string): Promise<Code> => ({
  name,
  lp: await import(join(src, "ingest", "LineProtocolRequest.ts")),
  push: await import(join(src, "usecases", "Push.ts")),
  plan: await import(join(src, "WritePlan.ts")),
  core: await import(join(src, "index.ts"))
})

const codes = [
  await load(`A ${values.base.slice(0, 9)}`, join(checkoutBase(values.base), "packages", "core", "src")),
  await load("B this checkout", join(root, "packages", "core", "src"))
]

/** One body through the path; returns a sum of what was read, so that nothing is optimised away. */
const write = (code: Code, widgets: ReadonlyMap<string, never>, body: Buffer): number => {
  const request = Either.getOrThrow(code.lp.decodeLineProtocol(body.toString("utf8"), "key", "ns", body))
  const writes = Either.getOrThrow(code.push.writesOf(request, widgets, code.core.defaultLimits))
  const plan = new code.plan.WritePlan({ lastTs: () => null, latest: () => null })
  if (plan.add(writes.writes, code.core.micros(1_800_000_000_000_000)) !== undefined) throw new Error("refused")
  let sum = 0
  for (let i = 0; i < plan.size; i++) {
    for (const e of plan.mutation(i).entries) sum += e.ts + (e.value ?? 0) + e.json.length
  }
  return sum
}

const cpuMicros = (): number => {
  const { system, user } = process.cpuUsage()
  return user + system
}
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!

for (const load of ["lp", "lp100"] as const satisfies ReadonlyArray<LineLoad>) {
  const bodies = Array.from({ length: 50 }, (_, k) => Buffer.from(lineBody(load, 1_000_000_000 + k)))
  const widgetsOf = (code: Code) =>
    new Map(
      declaredStreams.map((streamName, k) => [
        streamName,
        { id: k + 1, accountId: code.core.AccountId.make("a"), streamName, type: "sparkline", createdAt: 0 } as never
      ])
    )
  const sides = codes.map((code) => ({ code, widgets: widgetsOf(code), micros: [] as Array<number> }))
  const round = (side: (typeof sides)[number]) => {
    const start = cpuMicros()
    for (let i = 0; i < perRound; i++) write(side.code, side.widgets, bodies[i % bodies.length]!)
    return (cpuMicros() - start) / perRound
  }
  for (const side of sides) round(side)
  for (let r = 0; r < rounds; r++) for (const side of sides) side.micros.push(round(side))
  const [a, b] = sides as [(typeof sides)[0], (typeof sides)[0]]
  const pairs = a.micros.map((x, k) => b.micros[k]! / x)
  console.log(
    `${load}: ${a.code.name} ${median(a.micros).toFixed(0)} µs/body, ${b.code.name} ${median(b.micros).toFixed(0)} ` +
      `µs/body; B/A median pair ${median(pairs).toFixed(2)} (pairs ${pairs.map((x) => x.toFixed(2)).join(" ")})`
  )
}
