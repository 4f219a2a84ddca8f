import { copyStore, type CopyProgress, type SourceProblem } from "@dashstream/core"
import { Console, Effect } from "effect"
import { parseDatabaseUrl } from "./Config.js"
import { CommandFailed, UsageError } from "./Errors.js"
import * as Storage from "./Storage.js"

/**
 * `dashstream copy --from <db url> --to <db url>` (docs/api.md section 12): moves a deployment between backends
 * (SQLite to PostgreSQL when it outgrows one machine) or makes a backup (`--to sqlite:backup.db`, also from a
 * running deployment: the source is read in one consistent snapshot).
 */

/** Minimum time between two progress lines on stderr, in milliseconds. */
const progressIntervalMs = 2_000

const count = (n: number) => n.toLocaleString("en-US")

/** `1 account`, `2 accounts`, `1,000 entries`. */
const counted = (n: number, one: string, many: string) => `${count(n)} ${n === 1 ? one : many}`

/** Why the source was refused, after "the <database>" (docs/api.md section 12: one sentence, exit 1). */
const refusal = (problem: SourceProblem): string => {
  const expected = "; --from must name an existing Dashstream database"
  switch (problem) {
    case "missing":
      return `does not exist${expected}`
    case "not-dashstream":
      return `is not a Dashstream database (it holds no Dashstream schema)${expected}`
    case "older":
      return (
        "has an older Dashstream schema; bring it up to date with dashstream migrate first " +
        "(copy never changes its source)"
      )
    case "newer":
      return "was written by a newer version of Dashstream; copy it with that version"
  }
}

const progressLine = (p: CopyProgress): string => {
  const of = (done: number, total: number) =>
    `${count(done)} of ${count(total)}${total === 0 ? "" : ` (${Math.floor((done / total) * 100)}%)`}`
  return (
    `copy: accounts ${of(p.accounts, p.total.accounts)}, access keys ${of(p.accessKeys, p.total.accessKeys)}, ` +
    `dashboards ${of(p.dashboards, p.total.dashboards)}, rotations ${of(p.rotations, p.total.rotations)}, widgets ${of(p.widgets, p.total.widgets)}, ` +
    `entries ${of(p.entries, p.total.entries)}`
  )
}

/**
 * Copies every account, access key digest, widget, dashboard, rotation and entry of the database `fromUrl` into the database
 * `toUrl`. The source is opened read-only and never written (not even migrated): it must exist and be a Dashstream
 * database at this version's schema. The target must hold no account (its schema is created or brought up to date
 * first). Progress goes to stderr at most every {@link progressIntervalMs}; then the counts are checked and one line
 * printed to stdout. Everything is written in one transaction of the target: interrupted (Ctrl-C, a crash, a lost
 * connection), the copy leaves the target as it was, so running it again is safe.
 *
 * Fails with `UsageError` for a malformed URL or the same database twice, `CommandFailed` when the source does not
 * exist, is not a Dashstream database or has another schema version, the target already holds accounts, a database
 * fails or is unreachable, or the counts of the copy differ from the original's.
 */
export const run = (fromUrl: string, toUrl: string): Effect.Effect<void, UsageError | CommandFailed> =>
  Effect.gen(function* () {
    const from = yield* parseDatabaseUrl(fromUrl, "--from")
    const to = yield* parseDatabaseUrl(toUrl, "--to")
    if (Storage.same(from, to)) return yield* new UsageError({ message: "--from and --to name the same database" })
    const source = Storage.describe(from)
    const target = Storage.describe(to)
    let last = 0
    let lastPhase = ""
    const onProgress = (p: CopyProgress) =>
      Effect.suspend(() => {
        const now = performance.now()
        if (p.phase === lastPhase && now - last < progressIntervalMs) return Effect.void
        last = now
        lastPhase = p.phase
        return Console.error(progressLine(p))
      })
    const result = yield* Effect.scoped(
      Effect.gen(function* () {
        // The source first: a refused one (a typo in --from) leaves the target untouched, not even created.
        const sourceCopy = yield* Storage.storeCopySource(from).pipe(
          Effect.catchTag("SourceRefused", (error) =>
            Effect.fail(new CommandFailed({ message: `the ${source} ${refusal(error.problem)}` }))
          )
        )
        const targetCopy = yield* Storage.storeCopy(to)
        yield* Console.error(`copy: from the ${source} to the ${target}`)
        return yield* copyStore(sourceCopy, targetCopy, { onProgress }).pipe(
          Effect.catchTags({
            TargetNotEmpty: (error) =>
              new CommandFailed({
                message:
                  `the ${target} already holds ${counted(error.accounts, "account", "accounts")}; ` +
                  `copy only into an empty database (a new SQLite file, or a new PostgreSQL database or schema)`
              }),
            CopyStorageFailed: (error) => Storage.failure(error.side === "source" ? from : to, error.cause),
            CopyMismatch: (error) =>
              new CommandFailed({
                message: `the copy in the ${target} does not match the ${source}: ${error.differences.join("; ")}`
              })
          })
        )
      })
    )
    yield* Console.log(
      `Copied ${counted(result.accounts, "account", "accounts")}, ` +
        `${counted(result.accessKeys, "access key", "access keys")}, ${counted(result.widgets, "widget", "widgets")}, ` +
        `${counted(result.dashboards, "dashboard", "dashboards")}, ${counted(result.rotations, "rotation", "rotations")} ` +
        `and ${counted(result.entries, "entry", "entries")} ` +
        `from the ${source} to the ${target}; the counts match.`
    )
  })
