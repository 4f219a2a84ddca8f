import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import Database from "better-sqlite3"
import { afterAll, assert, describe, it } from "vitest"
import { Checkpointer } from "../src/internal/checkpointer.js"

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dashstream-checkpointer-"))
afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

let files = 0
const freshFile = () => Path.join(dir, `ckpt-${++files}.db`)

const waitFor = async (condition: () => boolean, ms = 10_000) => {
  const until = Date.now() + ms
  while (!condition()) {
    if (Date.now() > until) throw new Error("timed out waiting")
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

// The rows the database file holds without its WAL: a copy of the file alone, opened elsewhere.
const rowsInFileAlone = (filename: string): number => {
  const copy = `${filename}.copy`
  Fs.copyFileSync(filename, copy)
  const db = new Database(copy, { readonly: true })
  try {
    return db.prepare("SELECT count(*) FROM t").pluck().get() as number
  } finally {
    db.close()
    Fs.rmSync(copy)
  }
}

describe("Checkpointer", () => {
  it("takes the checkpoints off the writing connection and copies committed pages into the file", async () => {
    const filename = freshFile()
    const db = new Database(filename)
    db.pragma("journal_mode = WAL")
    db.exec("CREATE TABLE t (x INTEGER)")
    db.pragma("wal_checkpoint(TRUNCATE)")
    const failures: Array<Error> = []
    const checkpointer = new Checkpointer(db, (error) => failures.push(error), 20)
    try {
      checkpointer.start()
      await waitFor(() => db.pragma("wal_autocheckpoint", { simple: true }) === 0)
      const insert = db.prepare("INSERT INTO t VALUES (?)")
      // Fewer pages than SQLite's own threshold (1,000): only the thread can have copied them into the file.
      db.transaction(() => {
        for (let i = 0; i < 500; i++) insert.run(i)
      })()
      // Wait for the rows themselves: counting rounds from here would also count the "checkpointed" messages the
      // thread posted while the inserts ran (queued, not yet read), which on a loaded machine can be two or more.
      const before = checkpointer.checkpoints
      await waitFor(() => rowsInFileAlone(filename) === 500)
      // The thread may have copied them before the first look (it runs beside this one): its message is then read
      // only once this test yields, so the count is waited for rather than read at once.
      await waitFor(() => checkpointer.checkpoints > before)
      assert.deepStrictEqual(failures, [])
    } finally {
      await checkpointer.close()
      db.close()
    }
  })

  it("a thread that cannot open the file puts SQLite's own checkpoints back and says so once", async () => {
    const filename = freshFile()
    const db = new Database(filename)
    db.pragma("journal_mode = WAL")
    db.pragma("wal_autocheckpoint = 0")
    // The file is gone from the directory (the connection keeps it open): the thread's open fails.
    Fs.rmSync(filename)
    const failures: Array<Error> = []
    const checkpointer = new Checkpointer(db, (error) => failures.push(error), 20)
    try {
      checkpointer.start()
      await waitFor(() => failures.length > 0)
      assert.isTrue(checkpointer.failure)
      assert.strictEqual(db.pragma("wal_autocheckpoint", { simple: true }), 1000)
      checkpointer.start()
      await new Promise((resolve) => setTimeout(resolve, 100))
      assert.strictEqual(failures.length, 1)
    } finally {
      await checkpointer.close()
      db.close()
    }
  })
})
