/**
 * Line protocol batches with skipped streams (docs/api.md section 13.1), in one process, no HTTP: how long `UseCases.ingestDirect`
 * (falling back to the `ingest` effect when it declines, as the ingest lane does) takes per request for a
 * Telegraf-shaped batch: 1,000 lines of 10 float fields, 100 series (`cpu,cpu=cpuN,host=hostM`), one field of each
 * series declared as a line-graph widget, so 90% of the 10,000 field values go to undeclared streams and are skipped
 * and 1,000 are written. Every request is the same batch (its timestamps replace what the previous one stored). A
 * second case sends the batch with the key of an account without widgets: every value skipped, nothing written (the
 * lookups alone).
 *
 * Two codes run in the same process, alternating round by round (A, B, A, B, ...) so that a loaded machine slows both
 * alike: A is `packages/core` and `packages/storage-sqlite` as of `--base <commit>` (copied out with `git archive`
 * into `packages/storage-sqlite/.bench-base/<commit>`, where `effect`, `kysely` and `better-sqlite3` resolve as for
 * the adapter), B is this checkout. Each has its own SQLite file (WAL, `synchronous=normal`, group commit) behind the
 * account cache with its default options. The figure is the median round's microseconds per request; also how many
 * requests took the direct path.
 *
 * Usage: tsx --conditions=@dashstream/source bench/ingest-skip/run.ts --base <commit> [--rounds 10] [--requests 200]
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Effect, Either, Scope } from "effect"

const { values } = parseArgs({
  options: {
    base: { type: "string" },
    rounds: { type: "string", default: "10" },
    requests: { type: "string", default: "200" }
  }
})
if (values.base === undefined) throw new Error("--base <commit> is required")
const rounds = Number(values.rounds)
const requests = Number(values.requests)
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

/** `packages/core/src` and `packages/storage-sqlite/src` of `commit`, the adapter importing that core. */
const checkoutBase = (commit: string): string => {
  const dir = join(root, "packages", "storage-sqlite", ".bench-base", commit)
  if (existsSync(dir)) return dir
  mkdirSync(dir, { recursive: true })
  const tar = execFileSync("git", ["-C", root, "archive", commit, "packages/core/src", "packages/storage-sqlite/src"])
  execFileSync("tar", ["-x", "-C", dir], { input: tar })
  const walk = (d: string): Array<string> =>
    readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : [join(d, f)]))
  const coreIndex = join(dir, "packages", "core", "src", "index.js")
  for (const file of walk(join(dir, "packages", "storage-sqlite", "src"))) {
    const text = readFileSync(file, "utf8")
    const to = relative(dirname(file), coreIndex)
    writeFileSync(file, text.replaceAll('from "@dashstream/core"', `from "${to.startsWith(".") ? to : `./${to}`}"`))
  }
  return dir
}

type Core = typeof import("@dashstream/core")
type Sqlite = typeof import("@dashstream/storage-sqlite")

const load = async (dir: string): Promise<{ core: Core; sqlite: Sqlite }> => ({
  core: (await import(join(dir, "packages", "core", "src", "index.ts"))) as Core,
  sqlite: (await import(join(dir, "packages", "storage-sqlite", "src", "index.ts"))) as Sqlite
})

const KEY = "ds_bench-ingest-skip"
const t0 = 1_700_000_000_000_000_000n
const fields = ["usage_user", "usage_system", "usage_idle", "usage_nice", "usage_iowait"].concat([
  "usage_irq",
  "usage_softirq",
  "usage_steal",
  "usage_guest",
  "usage_guest_nice"
])
const series = Array.from({ length: 100 }, (_, s) => `cpu,cpu=cpu${s % 8},host=host${Math.floor(s / 8)}`)
const body = Array.from({ length: 1000 }, (_, i) => {
  const values = fields.map((f, k) => `${f}=${((i * 7 + k * 13) % 1000) / 10 + 0.0123}`).join(",")
  return `${series[i % 100]} ${values} ${t0 + BigInt(Math.floor(i / 100)) * 10_000_000_000n}`
}).join("\n")
/** One declared field per series: `cpu.usage_idle{cpu=cpuN,host=hostM}`. */
const declared = series.map((s) => {
  const [, cpu, host] = s.split(",")
  return `cpu.usage_idle{${cpu},${host}}`
})

const cases = [
  { name: "90% undeclared", key: KEY, skipped: 9000 },
  { name: "all undeclared", key: `${KEY}-empty`, skipped: 10_000 }
] as const

interface Side {
  readonly name: string
  /** Runs one request of case `c`; resolves with whether it took the direct path. */
  readonly run: (c: number) => Promise<boolean>
}

const side = (name: string, { core, sqlite }: { core: Core; sqlite: Sqlite }) =>
  Effect.gen(function* () {
    const dir = mkdtempSync(join(tmpdir(), "ingest-skip-"))
    const stores = yield* sqlite.make({ filename: join(dir, "bench.db"), synchronous: "normal" })
    const accounts = core.cachedAccountStore(stores.accountStore)
    const streams = stores.streamStore
    const id = "acc-bench" as never
    yield* stores.accountStore.createAccount({ id, name: "bench", createdAt: 0 }, core.digestAccessKey(KEY))
    for (const stream of declared) yield* stores.accountStore.createWidget(id, stream as never, "line-graph", 0)
    const empty = core.digestAccessKey(cases[1].key)
    yield* stores.accountStore.createAccount({ id: "acc-empty" as never, name: "empty", createdAt: 0 }, empty)
    const requests = cases.map((c) => Either.getOrThrow(core.decodeLineProtocol(body, c.key, "ns")))
    const limits = core.defaultLimits
    const viaEffect = (request: (typeof requests)[number]) =>
      Effect.runPromise(
        core.UseCases.ingest(request, limits).pipe(
          Effect.provideService(core.AccountStore, accounts),
          Effect.provideService(core.StreamStore, streams)
        )
      )
    const run = (c: number) =>
      new Promise<boolean>((resolve, reject) => {
        const expected = cases[c]!.skipped
        const request = requests[c]!
        const direct = core.UseCases.ingestDirect(request, limits, accounts, streams, (error, skipped) =>
          error === undefined && skipped === expected ? resolve(true) : reject(error ?? new Error(`skipped ${skipped}`))
        )
        if (!direct)
          viaEffect(request).then(
            (r) => (r.skipped === expected ? resolve(false) : reject(new Error(`skipped ${r.skipped}`))),
            reject
          )
      })
    return { name, run } satisfies Side
  })

const round = async (s: Side, c: number) => {
  let direct = 0
  const start = performance.now()
  for (let i = 0; i < requests; i++) if (await s.run(c)) direct++
  return { micros: ((performance.now() - start) * 1000) / requests, direct }
}

const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const main = Effect.gen(function* () {
  const base = yield* Effect.promise(() => load(checkoutBase(values.base!)))
  const head = yield* Effect.promise(() => load(root))
  const sides = [yield* side(`A ${values.base!.slice(0, 9)}`, base), yield* side("B this checkout", head)]
  for (let c = 0; c < cases.length; c++) {
    // Warm-up: the caches, the JIT.
    for (const s of sides) for (let i = 0; i < 20; i++) yield* Effect.promise(() => s.run(c))
    const results = sides.map(() => ({ micros: [] as Array<number>, direct: 0 }))
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < sides.length; k++) {
        const { micros, direct } = yield* Effect.promise(() => round(sides[k]!, c))
        results[k]!.micros.push(micros)
        results[k]!.direct += direct
      }
    }
    console.log(`${cases[c]!.name}: 1,000 lines x 10 fields, ${rounds} rounds x ${requests} requests`)
    sides.forEach((s, k) => {
      const { micros, direct } = results[k]!
      console.log(
        `  ${s.name.padEnd(20)} median ${median(micros).toFixed(0).padStart(6)} µs/request ` +
          `(rounds ${Math.min(...micros).toFixed(0)}-${Math.max(...micros).toFixed(0)}), ` +
          `direct ${direct}/${rounds * requests}`
      )
    })
  }
})

await Effect.runPromise(Effect.scoped(main as Effect.Effect<void, unknown, Scope.Scope>))
