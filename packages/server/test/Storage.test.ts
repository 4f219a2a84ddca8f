import { assert, describe, it } from "@effect/vitest"
import { Either, Redacted } from "effect"
import * as Storage from "../src/Storage.js"

/** The backend registry's answers about a database, asked without opening it (README "Configuration"). */

const parsed = (url: string): Storage.Database => {
  const result = Storage.parseUrl(url, "--db")
  if (Either.isLeft(result)) assert.fail(`expected a database, got ${result.left}`)
  return result.right
}

const problem = (url: string): string => {
  const result = Storage.parseUrl(url, "--db")
  if (Either.isRight(result)) assert.fail(`expected an error, got ${JSON.stringify(result.right)}`)
  return result.left
}

describe("Storage.parseUrl", () => {
  it("recognises each backend's URLs, trimmed", () => {
    assert.deepStrictEqual(parsed(" sqlite:./x.db\n"), { _tag: "Sqlite", filename: "./x.db" })
    for (const url of ["postgres://u:p@h:5432/db", "POSTGRESQL://h/db"]) {
      const database = parsed(url)
      assert.strictEqual(database._tag, "Postgres")
      if (database._tag === "Postgres") assert.strictEqual(Redacted.value(database.url), url)
    }
  })

  it("lists every backend's form for an unknown scheme, never the value", () => {
    const message = problem("mysql://u:secret@h/db")
    assert.strictEqual(
      message,
      "--db must be sqlite:<path> (for example sqlite:./data/dashstream.db) or a postgres:// or postgresql:// URL, " +
        "got a mysql: URL"
    )
    assert.match(problem(""), /got an empty value$/)
    assert.match(problem("data.db"), /got a value without a scheme$/)
    assert.strictEqual(
      problem("sqlite:"),
      "--db sqlite: needs a file path, as in sqlite:<path> (for example sqlite:./data/dashstream.db)"
    )
    assert.match(problem("postgres://[x"), /^--db is not a valid URL/)
  })
})

describe("the registry's questions", () => {
  it("same: one SQLite file by its resolved path, one PostgreSQL database by its URL; never across backends", () => {
    assert.isTrue(Storage.same(parsed("sqlite:./a.db"), parsed(`sqlite:${process.cwd()}/a.db`)))
    assert.isFalse(Storage.same(parsed("sqlite:./a.db"), parsed("sqlite:./b.db")))
    assert.isTrue(Storage.same(parsed("postgres://h/db"), parsed("postgres://h/db")))
    assert.isFalse(Storage.same(parsed("postgres://h/db"), parsed("postgres://h/other")))
    assert.isFalse(Storage.same(parsed("sqlite:postgres://h/db"), parsed("postgres://h/db")))
  })

  it("holdsSecret: a PostgreSQL URL with a password", () => {
    assert.isTrue(Storage.holdsSecret(parsed("postgres://u:pw@h/db")))
    assert.isFalse(Storage.holdsSecret(parsed("postgres://u@h/db")))
    assert.isFalse(Storage.holdsSecret(parsed("sqlite:./pw.db")))
  })

  it("sharesFile: SQLite only", () => {
    assert.isTrue(Storage.sharesFile(parsed("sqlite:./a.db")))
    assert.isFalse(Storage.sharesFile(parsed("postgres://h/db")))
  })
})
