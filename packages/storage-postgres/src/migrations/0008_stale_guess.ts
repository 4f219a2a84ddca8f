import { type Kysely, sql } from "kysely"

/**
 * 0008: `dashstream_stale_guess()`, called by the group commit's one-statement path (a group planned on guessed
 * `last_ts`) when a guess was wrong under the row locks. It raises SQLSTATE `DS001` with a message that says what
 * happened, so that the statement stores nothing (its early inserts included) and the server's log names the event
 * instead of showing an arithmetic error. Frozen in time: it takes `Kysely<any>` and imports no application code.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`CREATE FUNCTION dashstream_stale_guess() RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      RAISE EXCEPTION 'dashstream: stale last_ts guess, the group of writes is planned again (nothing was lost)'
        USING ERRCODE = 'DS001',
          HINT = 'Expected while several writers store to one stream; see "The PostgreSQL log" in Dashstream''s docs/running.md.';
    END $$`.execute(db)
}

/** Undoes {@link up}. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await sql`DROP FUNCTION dashstream_stale_guess()`.execute(db)
}
