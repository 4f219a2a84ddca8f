import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import Database from "better-sqlite3"
import { type Micros, pageOfRendered, type RenderedPage, StorageUnavailable } from "@dashstream/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { PageReader } from "../src/internal/pageReader.js"
import { prepareBlockReads } from "../src/internal/blockReads.js"
import { EntryBatch, prepareBlockStatements } from "../src/internal/writePath.js"

/**
 * The pages of streamed reads are read on a thread of their own (a large read must not hold the
 * event loop): the thread's page is the page the event loop's connection reads; the event loop goes on while a large
 * page is read; a write committed before a page is asked is in it; a thread that dies leaves reads working (on the
 * event loop); a closed reader refuses pages.
 */

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dashstream-page-reader-"))
afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))
let files = 0

const T0 = 1_700_000_000_000_000

/** A WAL file with the `entry_blocks` table of the schema and `count` entries of stream 1, one a second from T0. */
const fileWith = (count: number) => {
  const filename = Path.join(dir, `pages-${++files}.db`)
  const db = new Database(filename)
  db.pragma("journal_mode = WAL")
  db.exec(
    "CREATE TABLE entry_blocks (id INTEGER PRIMARY KEY, stream_id INTEGER NOT NULL, first_ts INTEGER NOT NULL, " +
      "last_ts INTEGER NOT NULL, n INTEGER NOT NULL, last_at INTEGER NOT NULL, data BLOB NOT NULL, summary BLOB) STRICT"
  )
  db.exec("CREATE UNIQUE INDEX entry_blocks_stream_ts ON entry_blocks (stream_id, first_ts)")
  const batch = new EntryBatch(prepareBlockStatements(db))
  const add = (ts: number, value: number, point: string) => {
    batch.add(1, ts, value, point)
    batch.flush()
  }
  db.transaction(() => {
    for (let i = 0; i < count; i++) batch.add(1, T0 + i * 1_000_000 + (i % 3), i, `{"number":${i}}`)
    batch.flush()
  })()
  const reads = prepareBlockReads(db)
  const onLoop = (stream: number, after: Micros, limit: number): RenderedPage =>
    pageOfRendered(reads.page(stream, after, limit))
  return { filename, db, onLoop, insert: { run: add } }
}

const withReader = <A, E>(
  filename: string,
  fallback: (stream: number, after: Micros, limit: number) => RenderedPage,
  use: (reader: PageReader) => Effect.Effect<A, E>
) =>
  Effect.acquireUseRelease(
    Effect.sync(() => new PageReader(filename, 1000, (...page) => Effect.sync(() => fallback(...page)))),
    use,
    (reader) => Effect.promise(() => reader.close())
  )

describe("PageReader", () => {
  it.effect("a page read on the thread is the page the event loop's connection reads, keyset cursor included", () => {
    const file = fileWith(2_500)
    return withReader(file.filename, file.onLoop, (reader) =>
      Effect.gen(function* () {
        let after = 0 as Micros
        let pages = 0
        for (;;) {
          const page = yield* reader.readPage(1, after, 1_000)
          assert.deepStrictEqual(page, file.onLoop(1, after, 1_000))
          if (page.count === 0) break
          pages++
          after = page.lastTs!
        }
        assert.strictEqual(pages, 3)
        // An unknown stream and a cursor past the end are empty pages.
        assert.deepStrictEqual(yield* reader.readPage(2, 0 as Micros, 10), { text: "", count: 0, lastTs: null })
        assert.isUndefined(reader.failure)
      })
    ).pipe(Effect.ensuring(Effect.sync(() => file.db.close())))
  })

  it.effect("the event loop goes on while a large page is read", () => {
    const file = fileWith(200_000)
    return withReader(file.filename, file.onLoop, (reader) =>
      Effect.gen(function* () {
        let turns = 0
        let reading = true
        const tick = () => {
          turns++
          if (reading) setImmediate(tick)
        }
        setImmediate(tick)
        const page = yield* reader
          .readPage(1, 0 as Micros, 200_000)
          .pipe(Effect.ensuring(Effect.sync(() => (reading = false))))
        assert.strictEqual(page.count, 200_000)
        // Read on the event loop, the same page leaves no turn to anyone until it is done.
        assert.isAbove(turns, 10, `the event loop turned ${turns} times while 200,000 entries were read`)
      })
    ).pipe(Effect.ensuring(Effect.sync(() => file.db.close())))
  })

  it.effect("a write committed before a page is asked is in the page", () => {
    const file = fileWith(10)
    return withReader(file.filename, file.onLoop, (reader) =>
      Effect.gen(function* () {
        const before = yield* reader.readPage(1, 0 as Micros, 100)
        file.insert.run(T0 + 3_600_000_000, 42, '{"number":42}')
        const after = yield* reader.readPage(1, before.lastTs!, 100)
        assert.strictEqual(after.count, 1)
        assert.strictEqual(after.text, '{"ts":1700003600,"point":{"number":42}}')
      })
    ).pipe(Effect.ensuring(Effect.sync(() => file.db.close())))
  })

  it.effect(
    "a thread that cannot open the file fails the pages waiting on it; later pages are read on the event loop",
    () => {
      const file = fileWith(5)
      const missing = Path.join(dir, "missing.db")
      return withReader(missing, file.onLoop, (reader) =>
        Effect.gen(function* () {
          const first = yield* Effect.either(reader.readPage(1, 0 as Micros, 100))
          assert.isTrue(Either.isLeft(first) && first.left instanceof StorageUnavailable, String(first))
          assert.isDefined(reader.failure)
          const later = yield* reader.readPage(1, 0 as Micros, 100)
          assert.strictEqual(later.count, 5)
        })
      ).pipe(Effect.ensuring(Effect.sync(() => file.db.close())))
    }
  )

  it.effect("a closed reader refuses pages with StorageUnavailable", () => {
    const file = fileWith(5)
    return Effect.gen(function* () {
      const reader = new PageReader(file.filename, 1000, (...page) => Effect.sync(() => file.onLoop(...page)))
      assert.strictEqual((yield* reader.readPage(1, 0 as Micros, 100)).count, 5)
      yield* Effect.promise(() => reader.close())
      const refused = yield* Effect.either(reader.readPage(1, 0 as Micros, 100))
      assert.isTrue(Either.isLeft(refused) && refused.left instanceof StorageUnavailable)
    }).pipe(Effect.ensuring(Effect.sync(() => file.db.close())))
  })
})
