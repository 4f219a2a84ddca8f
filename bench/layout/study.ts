/**
 * The SQLite entries layout study: the cost of storing and reading entries in three layouts, with the
 * adapter's own statements and pragmas, in one process without HTTP.
 *
 * - `rows`: the table before migration 0007 (one row per entry, unique `(stream_id, ts)` index), written by the adapter's multi-row
 *   upserts (256/32/4/1 rows a statement) and one `last_ts` update per stream.
 * - `blocks-N`: up to N entries per row in a packed binary encoding (float64 ts, float64 value, uint32 offsets, the
 *   points' JSON text), keyed by `(stream_id, first_ts)`; a stream's tail block is rewritten when a write appends to
 *   it (read, decode, re-encode), a full block is never touched again.
 * - `log`: a time-ordered append log (rowid table, no index), merged into blocks per stream in bulk (the merge timed
 *   apart).
 *
 * Usage: pnpm exec tsx bench/layout/study.ts [--dir /tmp] [--rounds 200] (LAYOUTS=rows,blocks-32 picks and orders
 * the layouts; JSONL=1 prints a JSON object a layout)
 * Prints microseconds per request (statements inside the transaction, then COMMIT with `synchronous=NORMAL`: the WAL
 * frames without the sync, which the group commit does off the event loop), WAL bytes per request, and read costs.
 */
import Database from "better-sqlite3"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { parseArgs } from "node:util"
// The row layout's statements as the adapter ran them before migration 0007 (its `internal/statements.ts` of then).
const Sql = {
  setLastTs: "UPDATE streams SET last_ts = ? WHERE id = ?",
  upsert:
    "INSERT INTO entries (stream_id, ts, value, point) VALUES (?, ?, ?, ?) " +
    "ON CONFLICT (stream_id, ts) DO UPDATE SET value = excluded.value, point = excluded.point",
  latest: "SELECT ts, point AS json FROM entries WHERE stream_id = ? ORDER BY ts DESC LIMIT 1",
  page:
    `SELECT '{"ts":' || CASE WHEN ts % 1000000 = 0 THEN ts / 1000000 ` +
    `ELSE rtrim(printf('%d.%06d', ts / 1000000, ts % 1000000), '0') END || ',"point":' || point || '}' ` +
    "FROM entries WHERE stream_id = ? AND ts > ? ORDER BY ts LIMIT ?"
} as const
const upsertRowsSql = (rows: number): string =>
  "INSERT INTO entries (stream_id, ts, value, point) VALUES " +
  Array.from({ length: rows }, () => "(?, ?, ?, ?)").join(", ") +
  " ON CONFLICT (stream_id, ts) DO UPDATE SET value = excluded.value, point = excluded.point"

const { values: args } = parseArgs({
  options: { dir: { type: "string", default: "/tmp" }, rounds: { type: "string", default: "200" } }
})
const rounds = Number(args.rounds)

const open = (name: string) => {
  const file = Path.join(args.dir!, `layout-${name}-${process.pid}.db`)
  for (const f of [file, `${file}-wal`, `${file}-shm`]) Fs.rmSync(f, { force: true })
  const db = new Database(file)
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = NORMAL")
  db.pragma("foreign_keys = ON")
  db.exec(`CREATE TABLE streams (id INTEGER PRIMARY KEY AUTOINCREMENT, last_ts INTEGER, cleared_ts INTEGER) STRICT;
    CREATE TABLE entries (id INTEGER PRIMARY KEY, stream_id INTEGER NOT NULL REFERENCES streams(id) ON DELETE CASCADE,
      ts INTEGER NOT NULL, value REAL, point TEXT NOT NULL) STRICT;
    CREATE UNIQUE INDEX entries_stream_ts ON entries (stream_id, ts);
    CREATE TABLE entry_blocks (id INTEGER PRIMARY KEY, stream_id INTEGER NOT NULL, first_ts INTEGER NOT NULL,
      last_ts INTEGER NOT NULL, n INTEGER NOT NULL, last_at INTEGER NOT NULL, data BLOB NOT NULL) STRICT;
    CREATE UNIQUE INDEX entry_blocks_stream_ts ON entry_blocks (stream_id, first_ts);
    CREATE TABLE entry_log (stream_id INTEGER NOT NULL, ts INTEGER NOT NULL, value REAL, point TEXT NOT NULL) STRICT;`)
  for (let i = 0; i < 1000; i++) db.prepare("INSERT INTO streams (last_ts) VALUES (NULL)").run()
  return { db, file }
}

interface Entry {
  ts: number
  value: number | null
  json: string
}

// ---- packed block encoding ----
/**
 * A block is a run of records, each `ts (f64) | value (f64, NaN = null) | length (u32) | the point's UTF-8 JSON`;
 * the row's `last_at` is the byte offset of its last record, so the latest entry is read without decoding the rest,
 * and appending to a block is a concatenation (`data || ?` in SQL).
 */
const encode = (entries: ReadonlyArray<Entry>): { data: Buffer; lastAt: number } => {
  let bytes = 0
  for (const e of entries) bytes += 20 + Buffer.byteLength(e.json)
  const buf = Buffer.allocUnsafe(bytes)
  let at = 0
  let lastAt = 0
  for (const e of entries) {
    lastAt = at
    buf.writeDoubleLE(e.ts, at)
    buf.writeDoubleLE(e.value ?? NaN, at + 8)
    const len = buf.write(e.json, at + 20)
    buf.writeUInt32LE(len, at + 16)
    at += 20 + len
  }
  return { data: buf, lastAt }
}
const decode = (buf: Buffer): Array<Entry> => {
  const out: Array<Entry> = []
  for (let at = 0; at < buf.length;) {
    const v = buf.readDoubleLE(at + 8)
    const len = buf.readUInt32LE(at + 16)
    out.push({
      ts: buf.readDoubleLE(at),
      value: Number.isNaN(v) ? null : v,
      json: buf.toString("utf8", at + 20, at + 20 + len)
    })
    at += 20 + len
  }
  return out
}
const decodeAt = (buf: Buffer, at: number): Entry => {
  const v = buf.readDoubleLE(at + 8)
  const len = buf.readUInt32LE(at + 16)
  return {
    ts: buf.readDoubleLE(at),
    value: Number.isNaN(v) ? null : v,
    json: buf.toString("utf8", at + 20, at + 20 + len)
  }
}

// ---- writers: each stores one group (a list of [stream, entries ascending, all newer than the stream's last]) ----
type Group = ReadonlyArray<readonly [number, ReadonlyArray<Entry>]>
type Writer = (group: Group) => void

const rowsWriter = (db: Database.Database): Writer => {
  const sizes = [256, 32, 4, 1]
  const stmts = sizes.map((n) => db.prepare(upsertRowsSql(n)))
  const setLast = db.prepare(Sql.setLastTs)
  return (group) => {
    const rows: Array<number | string | null> = []
    for (const [stream, entries] of group) for (const e of entries) rows.push(stream, e.ts, e.value, e.json)
    let at = 0
    for (let k = 0; k < sizes.length; k++) {
      const width = sizes[k]! * 4
      while (rows.length - at >= width) {
        stmts[k]!.run(rows.slice(at, at + width))
        at += width
      }
    }
    for (const [stream, entries] of group) setLast.run(entries[entries.length - 1]!.ts, stream)
  }
}

const blocksWriter = (db: Database.Database, size: number): Writer => {
  const tail = db
    .prepare<[number], [number, number]>(
      "SELECT id, n FROM entry_blocks WHERE stream_id = ? ORDER BY first_ts DESC LIMIT 1"
    )
    .raw()
  const append = db.prepare(
    "UPDATE entry_blocks SET last_ts = ?, n = n + ?, last_at = length(data) + ?, data = CAST(data || ? AS BLOB) WHERE id = ?"
  )
  const insert = db.prepare(
    "INSERT INTO entry_blocks (stream_id, first_ts, last_ts, n, last_at, data) VALUES (?, ?, ?, ?, ?, ?)"
  )
  const setLast = db.prepare(Sql.setLastTs)
  return (group) => {
    for (const [stream, entries] of group) {
      let rest = entries as ReadonlyArray<Entry>
      const t = tail.get(stream) as [number, number] | undefined
      if (t !== undefined && t[1] < size) {
        const take = rest.slice(0, size - t[1])
        rest = rest.slice(take.length)
        const { data, lastAt } = encode(take)
        append.run(take[take.length - 1]!.ts, take.length, lastAt, data, t[0])
      }
      for (let i = 0; i < rest.length; i += size) {
        const chunk = rest.slice(i, i + size)
        const { data, lastAt } = encode(chunk)
        insert.run(stream, chunk[0]!.ts, chunk[chunk.length - 1]!.ts, chunk.length, lastAt, data)
      }
      setLast.run(entries[entries.length - 1]!.ts, stream)
    }
  }
}

const logWriter = (db: Database.Database): Writer => {
  const sizes = [256, 32, 4, 1]
  const stmts = sizes.map((n) =>
    db.prepare("INSERT INTO entry_log (stream_id, ts, value, point) VALUES " + Array(n).fill("(?, ?, ?, ?)").join(", "))
  )
  const setLast = db.prepare(Sql.setLastTs)
  return (group) => {
    const rows: Array<number | string | null> = []
    for (const [stream, entries] of group) for (const e of entries) rows.push(stream, e.ts, e.value, e.json)
    let at = 0
    for (let k = 0; k < sizes.length; k++) {
      const width = sizes[k]! * 4
      while (rows.length - at >= width) {
        stmts[k]!.run(rows.slice(at, at + width))
        at += width
      }
    }
    for (const [stream, entries] of group) setLast.run(entries[entries.length - 1]!.ts, stream)
  }
}
/** Moves the log into blocks of `size` (appending to each stream's tail block); returns entries moved. */
const mergeLog = (db: Database.Database, size: number): number => {
  const all = db.prepare<[], { stream_id: number; ts: number; value: number | null; point: string }>(
    "SELECT stream_id, ts, value, point FROM entry_log ORDER BY rowid"
  )
  const write = blocksWriter(db, size)
  let moved = 0
  db.transaction(() => {
    const byStream = new Map<number, Array<Entry>>()
    for (const r of all.iterate()) {
      let list = byStream.get(r.stream_id)
      if (list === undefined) byStream.set(r.stream_id, (list = []))
      list.push({ ts: r.ts, value: r.value, json: r.point })
      moved++
    }
    write([...byStream])
    db.prepare("DELETE FROM entry_log").run()
  }).immediate()
  return moved
}

// ---- loads ----
let clock = 1_700_000_000_000_000
const points = (n: number): Array<Entry> =>
  Array.from({ length: n }, (_, k) => ({ ts: (clock += 1000), value: k, json: `{"number":${k}}` }))
/** 1,000 timestamped points to one stream per request, `perGroup` requests a transaction (streams 1..10 in turn). */
const sparkLoad = (round: number): Group => [[1 + (round % 10), points(1000)]]
/** 100 streams x 1 point a request, 25 requests a group: each stream gets 25 entries. */
const multiLoad = (): Group => {
  const out: Array<[number, Array<Entry>]> = []
  for (let s = 0; s < 100; s++) out.push([101 + s, []])
  for (let r = 0; r < 25; r++) for (let s = 0; s < 100; s++) out[s]![1].push(points(1)[0]!)
  return out
}

/** Single points: 25 pushes a group, to 25 of 100 streams in turn (201..300), one entry each. */
let singleAt = 0
const singleLoad = (): Group => {
  const out: Array<[number, Array<Entry>]> = []
  for (let k = 0; k < 25; k++) out.push([201 + (singleAt++ % 100), points(1)])
  return out
}

const walSize = (file: string) => {
  try {
    return Fs.statSync(`${file}-wal`).size
  } catch {
    return 0
  }
}

const time = (db: Database.Database, write: Writer, load: () => Group, n: number) => {
  let inside = 0
  let commit = 0
  db.pragma("wal_autocheckpoint = 0")
  const begin = db.prepare("BEGIN IMMEDIATE")
  const end = db.prepare("COMMIT")
  for (let i = 0; i < n; i++) {
    const group = load()
    const t0 = process.hrtime.bigint()
    begin.run()
    write(group)
    const t1 = process.hrtime.bigint()
    end.run()
    const t2 = process.hrtime.bigint()
    inside += Number(t1 - t0)
    commit += Number(t2 - t1)
    if (i % 50 === 49) db.pragma("wal_checkpoint(TRUNCATE)")
  }
  return { insideUs: inside / n / 1000, commitUs: commit / n / 1000 }
}

const walPerGroup = (db: Database.Database, file: string, write: Writer, load: () => Group, n: number) => {
  db.pragma("wal_checkpoint(TRUNCATE)")
  for (let i = 0; i < n; i++) db.transaction(() => write(load())).immediate()
  return walSize(file) / n
}

const readCosts = (db: Database.Database, layout: "rows" | "blocks") => {
  const latestRows = db.prepare<[number], { ts: number; json: string }>(Sql.latest)
  const latestBlock = db
    .prepare<[number], [number, Buffer]>(
      "SELECT 0, substr(data, last_at + 1) FROM entry_blocks WHERE stream_id = ? ORDER BY first_ts DESC LIMIT 1"
    )
    .raw()
  const page = db.prepare<[number, number, number], string>(Sql.page).pluck()
  const blocksFrom = db
    .prepare<[number, number], Buffer>(
      "SELECT data FROM entry_blocks WHERE stream_id = ? AND last_ts > ? ORDER BY first_ts"
    )
    .pluck()
  const formatTs = (ts: number) =>
    ts % 1_000_000 === 0
      ? String(ts / 1_000_000)
      : `${Math.floor(ts / 1_000_000)}.${String(ts % 1_000_000)
          .padStart(6, "0")
          .replace(/0+$/, "")}`
  const renderPage = (stream: number, since: number, limit: number): Array<string> => {
    const out: Array<string> = []
    for (const data of blocksFrom.iterate(stream, since)) {
      for (const e of decode(data)) {
        if (e.ts <= since) continue
        out.push(`{"ts":${formatTs(e.ts)},"point":${e.json}}`)
        if (out.length === limit) return out
      }
    }
    return out
  }
  const n = 20000
  let t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) {
    const s = 1 + (i % 10)
    if (layout === "rows") latestRows.get(s)
    else {
      const [at, data] = latestBlock.get(s) as [number, Buffer]
      decodeAt(data, at)
    }
  }
  const latestUs = Number(process.hrtime.bigint() - t0) / n / 1000
  // 1,000 entries from the middle of stream 1.
  const since =
    layout === "rows"
      ? (db
          .prepare("SELECT ts FROM entries WHERE stream_id = 1 ORDER BY ts LIMIT 1 OFFSET 5000")
          .pluck()
          .get() as number)
      : decode(
          db
            .prepare("SELECT data FROM entry_blocks WHERE stream_id = 1 ORDER BY first_ts LIMIT 1 OFFSET 40")
            .pluck()
            .get() as Buffer
        )[3]!.ts
  const pages = 200
  let got = 0
  t0 = process.hrtime.bigint()
  for (let i = 0; i < pages; i++)
    got = layout === "rows" ? page.all(1, since, 1000).length : renderPage(1, since, 1000).length
  const pageUs = Number(process.hrtime.bigint() - t0) / pages / 1000
  return { latestUs, pageUs, got }
}

/**
 * One back-filled or replaced entry in the middle of stream 2's history, its own transaction's statements: rows by
 * the upsert; blocks by reading the block whose range holds the ts, decoding, replacing or inserting, re-encoding.
 */
const replaceCost = (db: Database.Database, layout: "rows" | "blocks") => {
  const upsert = db.prepare(Sql.upsert)
  const find = db.prepare<[number, number], { id: number; data: Buffer }>(
    "SELECT id, data FROM entry_blocks WHERE stream_id = ? AND first_ts <= ? ORDER BY first_ts DESC LIMIT 1"
  )
  const update = db.prepare(
    "UPDATE entry_blocks SET first_ts = ?, last_ts = ?, n = ?, last_at = ?, data = ? WHERE id = ?"
  )
  const tss =
    layout === "rows"
      ? (db.prepare("SELECT ts FROM entries WHERE stream_id = 2 ORDER BY ts").pluck().all() as Array<number>)
      : (
          db
            .prepare("SELECT data FROM entry_blocks WHERE stream_id = 2 ORDER BY first_ts")
            .pluck()
            .all() as Array<Buffer>
        ).flatMap((b) => decode(b).map((e) => e.ts))
  const n = 2000
  let total = 0
  for (let i = 0; i < n; i++) {
    // Alternately replace an existing entry and back-fill one between two (ts + 1).
    const ts = tss[Math.floor(tss.length / 4 + i * 7)]! + (i % 2)
    const json = `{"number":${i}}`
    const t0 = process.hrtime.bigint()
    db.transaction(() => {
      if (layout === "rows") upsert.run(2, ts, i, json)
      else {
        const b = find.get(2, ts)!
        const list = decode(b.data)
        let k = 0
        while (k < list.length && list[k]!.ts < ts) k++
        if (k < list.length && list[k]!.ts === ts) list[k] = { ts, value: i, json }
        else list.splice(k, 0, { ts, value: i, json })
        const { data, lastAt } = encode(list)
        update.run(list[0]!.ts, list[list.length - 1]!.ts, list.length, lastAt, data, b.id)
      }
    }).immediate()
    total += Number(process.hrtime.bigint() - t0)
  }
  return total / n / 1000
}

const report = (name: string, row: Record<string, number | string>) =>
  process.env.JSONL
    ? console.log(JSON.stringify({ name, ...row }))
    : console.log(
        name.padEnd(12),
        Object.entries(row)
          .map(([k, v]) => `${k}=${typeof v === "number" ? v.toFixed(1) : v}`)
          .join(" ")
      )

const candidates: Array<[string, (db: Database.Database) => Writer, "rows" | "blocks", number?]> = [
  ["rows", rowsWriter, "rows"],
  ["blocks-32", (db) => blocksWriter(db, 32), "blocks"],
  ["blocks-64", (db) => blocksWriter(db, 64), "blocks"],
  ["blocks-128", (db) => blocksWriter(db, 128), "blocks"],
  ["blocks-256", (db) => blocksWriter(db, 256), "blocks"],
  ["log+128", logWriter, "rows", 128]
]
const only = process.env.LAYOUTS?.split(",")
const ordered = only === undefined ? candidates : only.map((n) => candidates.find((c) => c[0] === n)!)
for (const [name, make, layout, mergeSize] of ordered) {
  const { db, file } = open(name)
  const write = make(db)
  // Preload: 300 groups of 1,000 points (streams 1..10 hold 30,000 entries each), 100 of the multi load.
  for (let i = 0; i < 300; i++) db.transaction(() => write(sparkLoad(i))).immediate()
  for (let i = 0; i < 100; i++) db.transaction(() => write(multiLoad())).immediate()
  if (mergeSize !== undefined) mergeLog(db, mergeSize)
  db.pragma("wal_checkpoint(TRUNCATE)")
  let r = 0
  const spark = time(db, write, () => sparkLoad(r++), rounds)
  const multi = time(db, write, multiLoad, rounds)
  const single = time(db, write, singleLoad, rounds * 4)
  const sparkWal = walPerGroup(db, file, write, () => sparkLoad(r++), 50)
  const multiWal = walPerGroup(db, file, write, multiLoad, 50)
  let mergeUs = 0
  if (mergeSize !== undefined) {
    const t0 = process.hrtime.bigint()
    const moved = mergeLog(db, mergeSize)
    mergeUs = Number(process.hrtime.bigint() - t0) / 1000 / moved
  }
  const reads = readCosts(db, mergeSize !== undefined ? "blocks" : layout)
  const replaceUs = replaceCost(db, mergeSize !== undefined ? "blocks" : layout)
  db.pragma("wal_checkpoint(TRUNCATE)")
  const size = Fs.statSync(file).size
  report(name, {
    "spark us/req": spark.insideUs,
    "commit us": spark.commitUs,
    "wal KB": sparkWal / 1024,
    "single us/grp": single.insideUs,
    "commit us  ": single.commitUs,
    "multi us/grp": multi.insideUs,
    "commit us ": multi.commitUs,
    "wal KB ": multiWal / 1024,
    ...(mergeSize !== undefined ? { "merge us/entry": mergeUs } : {}),
    "replace us": replaceUs,
    "latest us": reads.latestUs,
    "page1000 us": reads.pageUs,
    got: reads.got,
    "file MB": size / 1048576
  })
  db.close()
  for (const f of [file, `${file}-wal`, `${file}-shm`]) Fs.rmSync(f, { force: true })
}
