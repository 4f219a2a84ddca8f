import { type Kysely, sql } from "kysely"

/**
 * 0008: the conditions of the group commit's one-statement path (a group planned on guessed `last_ts`), each raised by
 * a function so that the statement stores nothing (its early inserts included) and the server's log names the event
 * instead of showing an arithmetic error: `dashstream_stale_guess()` (SQLSTATE `DS001`) when a guess was wrong under
 * the row locks, `dashstream_occupied()` (`DS002`) when entries replacing or back-filling stored ones overlap stored
 * blocks (the group is merged the two-round-trip way). Frozen in time: it takes `Kysely<any>` and imports no
 * application code.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`CREATE FUNCTION dashstream_stale_guess() RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      RAISE EXCEPTION 'dashstream: stale last_ts guess, the group of writes is planned again (nothing was lost)'
        USING ERRCODE = 'DS001',
          HINT = 'Expected while several writers store to one stream; see "The PostgreSQL log" in Dashstream''s docs/running.md.';
    END $$`.execute(db)
  await sql`CREATE FUNCTION dashstream_occupied() RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      RAISE EXCEPTION 'dashstream: entries overlap stored blocks, the group of writes is merged the longer way (nothing was lost)'
        USING ERRCODE = 'DS002',
          HINT = 'Expected when writes replace or back-fill stored entries; see "The PostgreSQL log" in Dashstream''s docs/running.md.';
    END $$`.execute(db)
}

/** Undoes {@link up}. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await sql`DROP FUNCTION dashstream_occupied()`.execute(db)
  await sql`DROP FUNCTION dashstream_stale_guess()`.execute(db)
}
