import { createRequire } from "node:module"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { openTestDatabase } from "@dashstream/storage-postgres/testing"
import pg from "pg"
import { cli, type Result, tempDir } from "./support.js"

/**
 * Commands started at once on a brand-new database each bring its schema up to date (docs/api.md section 8): a
 * `dashstream migrate` (as `serve` does before it listens) beside an `accounts create` and another `migrate`. One
 * process applies the migrations, the others wait for it and find them applied; every command succeeds and the
 * schema is the one a lone `migrate` makes. Real processes, a real SQLite file, a real PostgreSQL; a missing
 * PostgreSQL fails the test.
 */

/** better-sqlite3 as this test uses it (the server package depends on the driver, not on its type declarations). */
const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  file: string,
  options?: { readonly readonly: boolean }
) => {
  exec(sql: string): void
  pragma(pragma: string): unknown
  prepare(sql: string): { all(): Array<unknown>; get(): unknown; pluck(): { all(): Array<unknown>; get(): unknown } }
  close(): void
}

/** Rounds per backend: each one races three processes on a new database. */
const rounds = 8

/** The three commands of a round, started together. */
const race = (db: string): Promise<ReadonlyArray<Result>> =>
  Promise.all([
    cli(["migrate", "--db", db], undefined, 120_000),
    cli(["accounts", "create", "--json", "--db", db], undefined, 120_000),
    cli(["migrate", "--db", db], undefined, 120_000)
  ])

const assertAllSucceeded = (results: ReadonlyArray<Result>, round: number) => {
  for (const result of results) assert.strictEqual(result.code, 0, `round ${round}: ${result.stderr}`)
  assert.match(JSON.parse(results[1]!.stdout).accessKey, /^ds_/)
}

describe("commands started at once on a new database", { timeout: rounds * 60_000 }, () => {
  it("SQLite: every command succeeds and the schema is the one a lone migrate makes", async () => {
    const dir = tempDir()
    try {
      const schemaOf = (file: string) => {
        const db = new Database(file, { readonly: true })
        try {
          return {
            objects: db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").all(),
            applied: db.prepare("SELECT name FROM kysely_migration ORDER BY name").pluck().all(),
            accounts: db.prepare("SELECT count(*) FROM accounts").pluck().get()
          }
        } finally {
          db.close()
        }
      }
      const reference = join(dir.path, "reference.db")
      assert.strictEqual((await cli(["migrate", "--db", `sqlite:${reference}`])).code, 0)
      const expected = schemaOf(reference)
      assert.isAbove(expected.applied.length, 0)
      for (let round = 1; round <= rounds; round++) {
        const file = join(dir.path, `race-${round}.db`)
        assertAllSucceeded(await race(`sqlite:${file}`), round)
        const found = schemaOf(file)
        assert.deepStrictEqual(found.objects, expected.objects, `round ${round}`)
        assert.deepStrictEqual(found.applied, expected.applied, `round ${round}`)
        assert.strictEqual(found.accounts, 1, `round ${round}`)
      }
    } finally {
      dir.remove()
    }
  })

  it("SQLite: a command that waits over 30 s for another process's write lock says so and exits 1", async () => {
    const dir = tempDir()
    const file = join(dir.path, "held.db")
    // The file in WAL mode with its write lock held, as a process migrating it holds it.
    const holder = new Database(file)
    try {
      holder.pragma("journal_mode = WAL")
      holder.exec("BEGIN IMMEDIATE")
      const started = Date.now()
      const result = await cli(["migrate", "--db", `sqlite:${file}`], undefined, 120_000)
      assert.isAtLeast(Date.now() - started, 30_000)
      assert.strictEqual(result.code, 1, result.stderr)
      assert.match(
        result.stderr,
        /^dashstream: the SQLite file \S+ is unreachable: another process held the file's write lock for over 30 s .*run the command again once the other has finished migrating\n$/
      )
      holder.exec("ROLLBACK")
      const again = await cli(["migrate", "--db", `sqlite:${file}`], undefined, 120_000)
      assert.strictEqual(again.code, 0, again.stderr)
    } finally {
      holder.close()
      dir.remove()
    }
  })

  it("PostgreSQL: every command succeeds and the schema is the one a lone migrate makes", async () => {
    const schemaOf = async (url: string) => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        const columns = await client.query(
          `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
           WHERE table_schema = 'public' ORDER BY table_name, column_name`
        )
        const indexes = await client.query(
          "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname"
        )
        const applied = await client.query("SELECT name FROM kysely_migration ORDER BY name")
        const accounts = await client.query("SELECT count(*)::int AS n FROM accounts")
        return {
          columns: columns.rows,
          indexes: indexes.rows,
          applied: applied.rows.map((r) => r.name),
          accounts: accounts.rows[0].n
        }
      } finally {
        await client.end()
      }
    }
    const reference = await openTestDatabase()
    try {
      assert.strictEqual((await cli(["migrate", "--db", reference.url])).code, 0)
      const expected = await schemaOf(reference.url)
      assert.isAbove(expected.applied.length, 0)
      for (let round = 1; round <= rounds; round++) {
        const database = await openTestDatabase()
        try {
          assertAllSucceeded(await race(database.url), round)
          const found = await schemaOf(database.url)
          assert.deepStrictEqual(found.columns, expected.columns, `round ${round}`)
          assert.deepStrictEqual(found.indexes, expected.indexes, `round ${round}`)
          assert.deepStrictEqual(found.applied, expected.applied, `round ${round}`)
          assert.strictEqual(found.accounts, 1, `round ${round}`)
        } finally {
          await database.close()
        }
      }
    } finally {
      await reference.close()
    }
  })
})
