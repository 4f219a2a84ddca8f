import { type Kysely, sql } from "kysely"

/**
 * Entries stored at bulk speed. Frozen in time: it takes `Kysely<any>` and imports no application code.
 *
 * Measured on PostgreSQL 15 (docs/benchmarks.md): of a multi-row insert of new entries, the `id` column (a sequence
 * value and a second unique index per row) and the foreign key to `streams` (a row lock and an index probe of
 * `streams` per inserted row) cost more than the insert of the row itself. Neither is needed: an entry is named by
 * `(stream_id, ts)` (unique), and every write locks its stream's row and checks that it exists before storing.
 *
 * - `entries.id` is dropped (with its primary key and its sequence); the unique `(stream_id, ts)` stays.
 * - `entries_stream_id_fkey` is dropped; what its `ON DELETE CASCADE` did is done by a statement-level trigger on
 *   `streams`: a deleted stream's entries are deleted in the same transaction, by a statement that starts after the
 *   stream's row was deleted (so it also sees the entries of a write that held the row's lock until then; a later
 *   write finds no row and stores nothing).
 *
 * In place: `DROP COLUMN` and `DROP CONSTRAINT` change the catalog only (the column's space is reclaimed as rows
 * are rewritten), so the migration takes milliseconds whatever the size of `entries`.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`ALTER TABLE entries DROP CONSTRAINT entries_stream_id_fkey`.execute(db)
  await sql`ALTER TABLE entries DROP COLUMN id`.execute(db)
  await sql`CREATE FUNCTION dashstream_delete_entries_of_streams() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
    BEGIN
      DELETE FROM entries WHERE stream_id IN (SELECT id FROM deleted_streams);
      RETURN NULL;
    END $$`.execute(db)
  await sql`CREATE TRIGGER streams_delete_entries AFTER DELETE ON streams REFERENCING OLD TABLE AS deleted_streams
    FOR EACH STATEMENT EXECUTE FUNCTION dashstream_delete_entries_of_streams()`.execute(db)
}

/** Undoes {@link up}: the trigger and its function dropped, the foreign key and an `id` column made again. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await sql`DROP TRIGGER streams_delete_entries ON streams`.execute(db)
  await sql`DROP FUNCTION dashstream_delete_entries_of_streams()`.execute(db)
  await sql`ALTER TABLE entries ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY`.execute(db)
  await sql`ALTER TABLE entries ADD CONSTRAINT entries_stream_id_fkey FOREIGN KEY (stream_id) REFERENCES streams (id)
    ON DELETE CASCADE`.execute(db)
}
