import { ChangeFeed, type StreamChange } from "@dashstream/core"
import { hotPathSetup, hotPathWorkload } from "@dashstream/core/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import pg from "pg"
import { layer, migrate, parseUrl } from "../src/index.js"
import { openTestDatabase, withSchema } from "../src/testing/index.js"
import { freshSchema } from "./fixtures.js"

/**
 * Every statement the adapter runs on the hot paths uses an index (push and read latency must not grow with
 * the number of streams and entries). The SQL is not listed by hand: the test records every query the adapter's `pg`
 * clients send while the shared hot-path workload runs (push, clear, latest/since/page/live reads, another
 * process's listener's read of a followed stream, the dashboard token lookup, a decimation pass's per-stream calls),
 * splits the multi-statement simple queries of the group commit into statements, and EXPLAINs each distinct statement with the values it ran
 * with, so a statement added to a hot path later is checked without editing this file.
 *
 * Why `enable_seqscan = off`: on the test's tiny tables a sequential scan IS the cheapest plan, so the planner picks
 * it whether or not an index could serve the statement. With sequential scans priced out, the planner uses an index
 * wherever one applies; a `Seq Scan` left on one of our tables means no index can serve the statement. Pricing them
 * out also tempts the planner into reading a whole index in order instead, so an index scan must have an
 * `Index Cond` too, unless it is a page walked in index order: under a `Limit` and with no `Filter`, so that every row
 * it reads is a row of the page (the decimation pass's first page of streams).
 */

// Never skipped: without a PostgreSQL server, opening the database throws and this file fails.
const db = await openTestDatabase()
afterAll(() => db.close())

const tables = new Set(["accounts", "access_keys", "streams", "entry_blocks", "dashboards"])

/** One sent statement: its SQL and the values of its first run (none for a simple query). */
interface Sent {
  readonly sql: string
  readonly values: ReadonlyArray<unknown>
}

/**
 * Splits a simple query into its statements at the `;` outside string literals (`'...'` and `E'...'` with
 * backslash escapes; the group commit inlines texts as such literals).
 */
const splitStatements = (text: string): Array<string> => {
  const out: Array<string> = []
  let start = 0
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (c === "'") {
      const escapes = i > 0 && (text[i - 1] === "E" || text[i - 1] === "e")
      i++
      while (i < text.length) {
        if (escapes && text[i] === "\\") i += 2
        else if (text[i] === "'" && text[i + 1] === "'") i += 2
        else if (text[i] === "'") break
        else i++
      }
    } else if (c === ";") {
      out.push(text.slice(start, i))
      start = i + 1
    }
    i++
  }
  out.push(text.slice(start))
  return out.map((s) => s.trim()).filter((s) => s !== "")
}

/**
 * Runs `effect` with every query sent by a `pg.Client` (the pool's clients are `pg.Client`s) recorded as its
 * statements. The method is wrapped on the prototype and put back afterwards.
 */
const recording = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<[A, Array<Sent>], E, R> => {
  const proto = pg.Client.prototype as unknown as { query: (...args: Array<unknown>) => unknown }
  const sent: Array<Sent> = []
  return Effect.acquireUseRelease(
    Effect.sync(() => {
      const original = proto.query
      proto.query = function (this: pg.Client, ...args: Array<unknown>) {
        const [first, second] = args
        const config = typeof first === "string" ? { text: first, values: second } : (first as pg.QueryConfig)
        const values = Array.isArray(config.values) ? (config.values as Array<unknown>) : []
        const statements = values.length > 0 ? [config.text] : splitStatements(config.text)
        for (const sql of statements) sent.push({ sql, values })
        return original.apply(this, args)
      }
      return original
    }),
    () => Effect.map(effect, (a): [A, Array<Sent>] => [a, sent]),
    (original) => Effect.sync(() => void (proto.query = original))
  )
}

/** Statements with a query plan: the rest (BEGIN, COMMIT, LISTEN, ...) touch no table. */
const planned = (sql: string) => /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i.test(sql)

/** A statement with its literals and numbers replaced, so that group commits of other ids count as one statement. */
const shape = (sql: string) =>
  sql
    .replace(/E?'(?:[^'\\]|''|\\.)*'/g, "?")
    .replace(/(?<!\$)\b\d+\b/g, "?")
    .replace(/\s+/g, " ")

interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly "Index Cond"?: string
  readonly Filter?: string
  readonly Plans?: ReadonlyArray<PlanNode>
}

/** The nodes of `plan` that read one of our tables without an index condition (see the module note). */
const unindexed = (plan: PlanNode, underLimit = false): Array<string> => {
  const here: Array<string> = []
  const relation = plan["Relation Name"]
  if (relation !== undefined && tables.has(relation)) {
    const type = plan["Node Type"]
    if (type === "Seq Scan") here.push(`Seq Scan on ${relation}`)
    const walk = underLimit && plan.Filter === undefined
    if ((type === "Index Scan" || type === "Index Only Scan") && plan["Index Cond"] === undefined && !walk) {
      here.push(`${type} using ${plan["Index Name"]} on ${relation} without an index condition`)
    }
  }
  const limit = underLimit || plan["Node Type"] === "Limit"
  return [...here, ...(plan.Plans ?? []).flatMap((child) => unindexed(child, limit))]
}

/** Builds the stores on a fresh schema, runs the setup unrecorded and the workload recorded. */
const capture = Effect.gen(function* () {
  const schema = freshSchema("hot")
  const config = yield* parseUrl(withSchema(db.url, schema))
  yield* migrate(config)
  const [, sent] = yield* Effect.scoped(
    Effect.gen(function* () {
      const stores = yield* Layer.build(layer(config))
      // Another process following `n`: its listener reads back what the workload pushes (the workload's own process
      // publishes its own changes without a read).
      const other = yield* Layer.build(layer(config))
      const fixture = yield* Effect.provide(hotPathSetup, stores)
      const seen: Array<StreamChange> = []
      yield* Effect.acquireRelease(
        Context.get(other, ChangeFeed).subscribe(fixture.widgets.get("n")!.id, (change) => seen.push(change)),
        (unsubscribe) => Effect.sync(unsubscribe)
      )
      const readBack = Effect.gen(function* () {
        for (let waited = 0; !seen.some((c) => c._tag === "Stored"); waited += 10) {
          if (waited > 10_000) return yield* Effect.die(new Error("no change reached the other process"))
          yield* Effect.sleep("10 millis")
        }
      })
      return yield* recording(Effect.zipRight(Effect.provide(hotPathWorkload(fixture), stores), readBack))
    })
  )
  const distinct = new Map<string, Sent>()
  for (const s of sent) if (planned(s.sql) && !distinct.has(shape(s.sql))) distinct.set(shape(s.sql), s)
  return { schema, statements: [...distinct.values()] }
})

/** EXPLAINs each statement in `schema` with sequential scans priced out; the findings, one line per bad node. */
const explainAll = (schema: string, statements: ReadonlyArray<Sent>) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: db.url })
    await client.connect()
    try {
      await client.query(`SET search_path TO ${schema}`)
      await client.query("SET enable_seqscan = off")
      const findings: Array<string> = []
      for (const { sql, values } of statements) {
        const result = await client.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(
          `EXPLAIN (FORMAT JSON) ${sql}`,
          values as Array<unknown>
        )
        for (const finding of unindexed(result.rows[0]!["QUERY PLAN"][0]!.Plan)) {
          findings.push(`${finding}\n    in: ${shape(sql).slice(0, 300)}`)
        }
      }
      return findings
    } finally {
      await client.end()
    }
  })

const sqlOf = (statements: ReadonlyArray<Sent>) => statements.map((s) => shape(s.sql)).join("\n")

describe("PostgreSQL hot statements", () => {
  it("splits simple queries at the semicolons outside literals", () => {
    assert.deepStrictEqual(splitStatements("BEGIN; SELECT 'a;b', E'c\\';d'; COMMIT"), [
      "BEGIN",
      "SELECT 'a;b', E'c\\';d'",
      "COMMIT"
    ])
    assert.deepStrictEqual(splitStatements("SELECT 'it''s; here'"), ["SELECT 'it''s; here'"])
  })

  it.effect(
    "every statement of the hot paths uses an index (EXPLAIN with enable_seqscan off)",
    () =>
      Effect.gen(function* () {
        const { schema, statements } = yield* capture
        const all = sqlOf(statements)
        // The recording saw the hot paths (not an empty or partial run): a statement of each is among them.
        for (const [what, pattern] of [
          ["key lookup", /from "access_keys" where "digest" = \$1/],
          ["widget lookup", /WITH ORDINALITY AS l\(account_id, name, n\) JOIN streams s/],
          ["stream rows locked", /SELECT id, last_ts FROM streams WHERE id = ANY/],
          [
            "latest entry of a delta",
            /CROSS JOIN LATERAL \(SELECT last_ts, last_at, data FROM entry_blocks WHERE stream_id = s\.id ORDER BY first_ts DESC LIMIT \?\) b$/m
          ],
          ["block insert and stream update", /INSERT INTO entry_blocks .* UPDATE streams SET last_ts/],
          ["clear", /DELETE FROM entry_blocks WHERE stream_id = ANY/],
          [
            "latest reads, batched",
            /FROM unnest\(\$1::bigint\[\]\) WITH ORDINALITY AS s\(id, n\) CROSS JOIN LATERAL \(SELECT last_ts, last_at, data FROM entry_blocks WHERE stream_id = s\.id ORDER BY first_ts DESC LIMIT \?\)/
          ],
          ["since read", /FROM entry_blocks WHERE stream_id = \$1 AND first_ts >= coalesce/],
          ["live read", /FROM streams s LEFT JOIN LATERAL/],
          [
            "listener reads, batched",
            /FROM unnest\(\$1::bigint\[\], \$2::bigint\[\], \$3::bigint\[\]\) WITH ORDINALITY AS r\(s, f, t, n\)/
          ],
          ["dashboard token lookup", /FROM dashboards AS t WHERE view_token = \$1/],
          ["decimation streams", /from "streams" as "s" where exists/],
          ["decimation entries", /FROM entry_blocks WHERE stream_id = \$1 AND first_ts >= .* AND first_ts < \$3/],
          ["decimation delete", /FROM unnest\(\$2::bigint\[\]\) AS d\(ts\) CROSS JOIN LATERAL/]
        ] as const) {
          assert.match(all, pattern, `no ${what} among the statements sent:\n${all}`)
        }
        assert.deepStrictEqual(yield* explainAll(schema, statements), [])
      }),
    60_000
  )

  it.effect(
    "a missing index is caught: without the (stream_id, first_ts) key the block reads scan entry_blocks",
    () =>
      Effect.gen(function* () {
        const { schema, statements } = yield* capture
        yield* Effect.promise(async () => {
          const client = new pg.Client({ connectionString: db.url })
          await client.connect()
          await client.query(`ALTER TABLE ${schema}.entry_blocks DROP CONSTRAINT entry_blocks_pkey`)
          await client.end()
        })
        // The upsert names the constraint's columns (ON CONFLICT): without it, it cannot be planned at all.
        const reads = statements.filter((s) => !/ON CONFLICT/.test(s.sql))
        const findings = yield* explainAll(schema, reads)
        assert.isTrue(
          findings.some(
            (f) =>
              f.split("\n")[0]!.includes(" on entry_blocks") &&
              /in: SELECT s\.n, b\.last_ts, convert_from.* FROM unnest\(\$1::bigint\[\]\) WITH ORDINALITY/.test(f)
          ),
          `expected the latest-entry read to scan entries, got:\n${findings.join("\n")}`
        )
      }),
    60_000
  )
})
