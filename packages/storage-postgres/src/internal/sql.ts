import {
  type CompiledQuery,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler
} from "kysely"
import type pg from "pg"
import type { Tables } from "./tables.js"

/**
 * Kysely as a query compiler only: queries are built with it and run on `pg` clients the adapter manages itself,
 * so that a transaction's client is released with its error (and discarded) when anything goes wrong.
 */
export const db = new Kysely<Tables>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler()
  }
})

/** Something a compiled query runs on: the pool (one statement, autocommit) or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, "query"> | Pick<pg.PoolClient, "query">

/** Runs a compiled query and returns its rows. Rejects with the `pg` error. */
export const run = async <R>(on: Queryable, query: CompiledQuery<R>): Promise<Array<R>> => {
  const result = await (on as pg.Pool).query<R & pg.QueryResultRow>(query.sql, query.parameters as Array<unknown>)
  return result.rows
}

/** Runs a compiled statement and returns the number of rows it inserted, updated or deleted. */
export const affected = async (on: Queryable, query: CompiledQuery): Promise<number> => {
  const result = await (on as pg.Pool).query(query.sql, query.parameters as Array<unknown>)
  return result.rowCount ?? 0
}

/**
 * Runs `body` in a transaction on one pooled client. `body` returns `{ commit: false }` to roll back (a domain
 * error found after reading, before writing). If anything throws (including COMMIT), the client is released with
 * the error so the pool discards it (the server rolls back a transaction whose connection closes) and the error
 * propagates: the transaction is never reported as committed.
 */
export const transaction = async <A>(
  pool: pg.Pool,
  body: (client: pg.PoolClient) => Promise<{ readonly commit: boolean; readonly value: A }>
): Promise<A> => {
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    const outcome = await body(client)
    const end = await client.query(outcome.commit ? "COMMIT" : "ROLLBACK")
    // COMMIT of a transaction the server already aborted answers ROLLBACK instead of failing.
    if (outcome.commit && end.command !== "COMMIT") throw new Error(`COMMIT answered ${end.command}`)
    client.release()
    return outcome.value
  } catch (error) {
    client.release(error instanceof Error ? error : new Error(String(error)))
    throw error
  }
}
