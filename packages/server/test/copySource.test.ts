/**
 * docs/api.md section 12: `dashstream copy` reads its source and never writes it. A source that does
 * not exist, is empty, is not a database, or holds no Dashstream schema is refused (exit 1, one sentence) and left
 * exactly as it was (a missing file is not created, an empty one does not grow); a source with an older Dashstream
 * schema is refused rather than migrated; the target is not created when the source is refused. A good source's file
 * is read without being changed.
 */
import { createHash } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { openTestDatabase, type TestDatabase } from "@dashstream/storage-postgres/testing"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCli } from "./e2e/harness.js"

/** better-sqlite3 as this test uses it (the server package depends on the driver, not on its type declarations). */
const Database = createRequire(import.meta.url)("better-sqlite3") as new (file: string) => {
  exec(sql: string): void
  prepare(sql: string): { get(...params: Array<unknown>): unknown; run(...params: Array<unknown>): unknown }
  pragma(pragma: string): unknown
  close(): void
}

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex")

/** The tables of a PostgreSQL database's `public` schema. */
const tablesOf = async (url: string): Promise<Array<string>> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const result = await client.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1"
    )
    return result.rows.map((r) => r.name)
  } finally {
    await client.end()
  }
}

/** One sentence on stderr, prefixed like every CLI failure. */
const oneSentence = /^dashstream: [^\n]+\n$/

describe("dashstream copy refuses a source that is not a Dashstream database", () => {
  const dir = mkdtempSync(join(tmpdir(), "dashstream-copy-source-"))
  let pgEmpty: TestDatabase

  beforeAll(async () => {
    pgEmpty = await openTestDatabase()
  }, 60_000)

  afterAll(async () => {
    await pgEmpty?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("a SQLite path that does not exist: exit 1, nothing created on either side", async () => {
    const missing = join(dir, "typo", "missing.db")
    const target = join(dir, "backup-of-missing.db")
    const result = await runCli(["copy", "--from", `sqlite:${missing}`, "--to", `sqlite:${target}`])
    expect(result.code, result.stderr).toBe(1)
    expect(result.stderr).toMatch(oneSentence)
    expect(result.stderr).toContain(`the SQLite file ${missing} does not exist`)
    expect(result.stdout).toBe("")
    expect(existsSync(missing)).toBe(false)
    expect(existsSync(join(dir, "typo"))).toBe(false)
    expect(existsSync(target)).toBe(false)
  }, 60_000)

  it("an empty file, a file that is not a database, another application's database: refused, unchanged", async () => {
    const empty = join(dir, "empty.db")
    writeFileSync(empty, "")
    const text = join(dir, "notes.db")
    writeFileSync(text, "these are my notes, not a database\n".repeat(40))
    const foreign = join(dir, "foreign.db")
    const db = new Database(foreign)
    db.exec("CREATE TABLE recipes (name TEXT); INSERT INTO recipes VALUES ('soup')")
    db.close()
    for (const source of [empty, text, foreign]) {
      const before = sha256(source)
      const target = join(dir, `copy-of-${source.split("/").pop()}`)
      const result = await runCli(["copy", "--from", `sqlite:${source}`, "--to", `sqlite:${target}`])
      expect(result.code, result.stderr).toBe(1)
      expect(result.stderr).toMatch(oneSentence)
      expect(result.stderr).toContain(`the SQLite file ${source} is not a Dashstream database`)
      expect(sha256(source)).toBe(before)
      expect(existsSync(target)).toBe(false)
    }
    expect(statSync(empty).size).toBe(0)
  }, 60_000)

  it("a Dashstream database with an older schema: refused, not migrated", async () => {
    const old = join(dir, "old.db")
    const migrated = await runCli(["migrate", "--db", `sqlite:${old}`])
    expect(migrated.code, migrated.stderr).toBe(0)
    // As a Dashstream that knew one migration less left it.
    const db = new Database(old)
    const latest = db.prepare("SELECT max(name) AS name FROM kysely_migration").get() as { name: string }
    db.prepare("DELETE FROM kysely_migration WHERE name = ?").run(latest.name)
    db.pragma("wal_checkpoint(TRUNCATE)")
    db.close()
    const before = sha256(old)
    const result = await runCli(["copy", "--from", `sqlite:${old}`, "--to", `sqlite:${join(dir, "copy-of-old.db")}`])
    expect(result.code, result.stderr).toBe(1)
    expect(result.stderr).toMatch(oneSentence)
    expect(result.stderr).toContain(`the SQLite file ${old} has an older Dashstream schema`)
    expect(result.stderr).toContain("dashstream migrate")
    expect(sha256(old)).toBe(before)
  }, 60_000)

  it("a PostgreSQL database without Dashstream's schema: refused, and no table is created in it", async () => {
    const result = await runCli(["copy", "--from", pgEmpty.url, "--to", `sqlite:${join(dir, "copy-of-pg.db")}`])
    expect(result.code, result.stderr).toBe(1)
    expect(result.stderr).toMatch(oneSentence)
    expect(result.stderr).toMatch(/the PostgreSQL database \S+ at \S+ is not a Dashstream database/)
    expect(result.stderr).not.toContain("postgres://")
    expect(await tablesOf(pgEmpty.url)).toEqual([])
    expect(existsSync(join(dir, "copy-of-pg.db"))).toBe(false)
  }, 60_000)

  it("a good source is read, never written: its file is byte for byte the same after the copy", async () => {
    const source = join(dir, "good.db")
    const created = await runCli(["accounts", "create", "--name", "a", "--db", `sqlite:${source}`])
    expect(created.code, created.stderr).toBe(0)
    const before = sha256(source)
    const result = await runCli(["copy", "--from", `sqlite:${source}`, "--to", `sqlite:${join(dir, "good-copy.db")}`])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain("Copied 1 account")
    expect(sha256(source)).toBe(before)
  }, 60_000)
})
