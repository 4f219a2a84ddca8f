import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import Database from "better-sqlite3"
import { hotPathSetup, hotPathWorkload } from "@dashstream/core/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as SqliteStore from "../src/index.js"
import { PageReader } from "../src/internal/pageReader.js"
import { DecimationSql, Sql, summaryFunction } from "../src/internal/statements.js"

/**
 * Every statement the adapter runs on the hot paths uses an index (push and read latency must not grow with
 * the number of streams and entries). The SQL is not listed by hand: the test records what better-sqlite3 actually
 * executes while the shared hot-path workload runs (push, clear, latest/since/page/live reads, the dashboard token
 * lookup, a decimation pass's per-stream calls) and runs EXPLAIN QUERY PLAN on each distinct statement with the
 * parameters it ran with, so a statement added to a hot path later is checked without editing this file.
 *
 * SQLite's planner needs no statistics to pick an index for an equality or range on an indexed column, so a small
 * database gives the plans a large one gets (the server never runs ANALYZE).
 */

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dashstream-sqlite-hot-"))
afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

let files = 0
const freshFile = () => Path.join(dir, `hot-${++files}.db`)

/** One executed statement: its SQL and the parameters of its first run. */
interface Executed {
  readonly sql: string
  readonly params: ReadonlyArray<unknown>
}

/**
 * Runs `effect` with every better-sqlite3 statement execution (`run`, `get`, `all`, `iterate`) recorded, by SQL text.
 * The methods are wrapped on the prototype every statement shares, and put back afterwards. The pages of streamed
 * reads run `Sql.page` on the page reader's thread, out of this isolate's sight: `PageReader.readPage` is wrapped the
 * same way and records that statement with the parameters it sends.
 */
const recording = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<[A, Map<string, Executed>], E, R> => {
  const proto = Object.getPrototypeOf(new Database(":memory:").prepare("SELECT 1")) as Record<string, unknown>
  const methods = ["run", "get", "all", "iterate"] as const
  const executed = new Map<string, Executed>()
  return Effect.acquireUseRelease(
    Effect.sync(() => {
      const originals = methods.map((m) => proto[m] as (...args: Array<unknown>) => unknown)
      methods.forEach((m, i) => {
        const original = originals[i]!
        proto[m] = function (this: Database.Statement, ...args: Array<unknown>) {
          if (!executed.has(this.source)) executed.set(this.source, { sql: this.source, params: args })
          return original.apply(this, args)
        }
      })
      const readPage = PageReader.prototype.readPage
      PageReader.prototype.readPage = function (this: PageReader, ...args: Parameters<PageReader["readPage"]>) {
        if (!executed.has(Sql.blocksFrom))
          executed.set(Sql.blocksFrom, { sql: Sql.blocksFrom, params: [args[0], args[0], args[1], args[1]] })
        return readPage.apply(this, args)
      }
      return { originals, readPage }
    }),
    () => Effect.map(effect, (a): [A, Map<string, Executed>] => [a, executed]),
    ({ originals, readPage }) =>
      Effect.sync(() => {
        methods.forEach((m, i) => (proto[m] = originals[i]))
        PageReader.prototype.readPage = readPage
      })
  )
}

/** Statements with a query plan: the rest (BEGIN, SAVEPOINT, PRAGMA, ...) touch no table. */
const planned = (sql: string) => /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i.test(sql)

// `SCAN x` reads all of x. Allowed: the statement's own rows (a subquery's, a multi-row VALUES clause, a constant
// row) and table-valued functions (json_each of the statement's parameter, pragma functions). Anything else is a
// table (or index) read in full.
const fullScan = /^SCAN (?!\(subquery-\d+\)|\d+-ROW VALUES CLAUSE|CONSTANT ROW|json_each\b|pragma_\w+)(\S+)/

/**
 * The plan lines of `sql` (with the parameters it ran with) that read a table or index in full; a statement that
 * can no longer be planned (an upsert whose unique index is gone) is reported with its error.
 */
const fullScans = (db: Database.Database, { sql, params }: Executed): Array<string> => {
  try {
    return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ readonly detail: string }>)
      .map((row) => row.detail)
      .filter((detail) => fullScan.test(detail))
  } catch (error) {
    return [`cannot plan: ${String(error)}`]
  }
}

/**
 * Builds a store on a fresh file, runs the setup unrecorded and the workload recorded; returns the file and what
 * ran. Closes the store before returning, so EXPLAIN runs on a quiet file.
 */
const capture = (groupCommit: boolean) =>
  Effect.gen(function* () {
    const filename = freshFile()
    const [, executed] = yield* Effect.scoped(
      Effect.gen(function* () {
        const stores = yield* Layer.build(SqliteStore.layer({ filename, groupCommit }))
        const fixture = yield* Effect.provide(hotPathSetup, stores)
        return yield* recording(Effect.provide(hotPathWorkload(fixture), stores))
      })
    )
    return { filename, executed: [...executed.values()].filter((e) => planned(e.sql)) }
  })

const explainAll = (filename: string, executed: ReadonlyArray<Executed>) => {
  const db = new Database(filename, { readonly: true })
  // The block upsert calls the summary function the writing connections register.
  db.function(summaryFunction, { deterministic: true }, (_data: unknown) => null)
  try {
    return executed.flatMap((e) => fullScans(db, e).map((detail) => `${detail}\n    in: ${e.sql.slice(0, 200)}`))
  } finally {
    db.close()
  }
}

describe("SQLite hot statements", () => {
  for (const groupCommit of [true, false]) {
    it.effect(`every statement of the hot paths uses an index (EXPLAIN QUERY PLAN; group commit ${groupCommit})`, () =>
      Effect.gen(function* () {
        const { filename, executed } = yield* capture(groupCommit)
        const sqls = new Set(executed.map((e) => e.sql))
        // The recording saw the hot paths (not an empty or partial run): the statements of each are among them.
        for (const expected of [
          Sql.accountByKey,
          Sql.widgetByName,
          Sql.widgetsByNames,
          Sql.lastTs,
          Sql.latest,
          Sql.setLastTs,
          Sql.clear,
          Sql.setClearedTs,
          Sql.blocksFrom,
          Sql.packedBlocks,
          Sql.packedSummaries,
          Sql.blockCountsNewestFirst,
          Sql.blocksStartingAt,
          Sql.tail,
          Sql.clearedTs,
          DecimationSql.streams,
          DecimationSql.newest,
          Sql.blockAt
        ]) {
          assert.isTrue(sqls.has(expected), `not executed by the workload: ${expected}`)
        }
        assert.isTrue(
          executed.some((e) => e.sql.startsWith("INSERT INTO entry_blocks")),
          "no block upsert executed"
        )
        assert.isTrue(
          executed.some((e) => e.sql.includes("FROM dashboards AS t WHERE view_token = ?")),
          "no dashboard token lookup executed"
        )
        assert.deepStrictEqual(explainAll(filename, executed), [])
      })
    )
  }

  it.effect("a missing index is caught: without entry_blocks_stream_ts the entry reads are full scans", () =>
    Effect.gen(function* () {
      const { filename, executed } = yield* capture(true)
      const db = new Database(filename)
      db.exec("DROP INDEX entry_blocks_stream_ts")
      db.close()
      const scans = explainAll(filename, executed)
      assert.isTrue(
        scans.some((s) => s.startsWith("SCAN entry_blocks") && s.includes(Sql.latest)),
        `expected the latest-entry read to scan entry_blocks, got:\n${scans.join("\n")}`
      )
    })
  )
})
