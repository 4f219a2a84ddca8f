import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import pg from "pg"
import { migrate, migrations, parseUrl } from "../src/index.js"
import { openTestDatabase } from "../src/testing/index.js"

/**
 * `migrate` run by several processes at once on one empty database (docs/api.md section 8: `serve` and any command
 * migrate first): one applies every migration, the others wait for it and find nothing to do. Each `migrate` has
 * its own pool, as each process does; a real PostgreSQL, whose absence fails the test.
 */

/** Rounds, each on a new database with three `migrate` at once. */
const rounds = 10

const appliedNames = async (url: string): Promise<ReadonlyArray<string>> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<{ name: string }>("SELECT name FROM kysely_migration ORDER BY name")).rows.map(
      (row) => row.name
    )
  } finally {
    await client.end()
  }
}

describe("migrate at once on an empty database", () => {
  it.effect(
    "one run applies every migration, the others wait and apply none",
    () =>
      Effect.gen(function* () {
        const all = Object.keys(migrations).sort()
        for (let round = 1; round <= rounds; round++) {
          const database = yield* Effect.promise(() => openTestDatabase())
          yield* Effect.gen(function* () {
            const config = yield* parseUrl(database.url)
            const runs = yield* Effect.all([migrate(config), migrate(config), migrate(config)], {
              concurrency: "unbounded"
            })
            const sorted = [...runs].sort((a, b) => b.length - a.length)
            assert.deepStrictEqual(sorted, [all, [], []], `round ${round}`)
            assert.deepStrictEqual(yield* Effect.promise(() => appliedNames(database.url)), all, `round ${round}`)
          }).pipe(Effect.ensuring(Effect.promise(() => database.close())))
        }
      }),
    120_000
  )
})
