/**
 * The SQLite adapter of Dashstream's storage ports (`AccountStore`, `StreamStore`, `DecimationStore`), on Kysely and
 * better-sqlite3.
 * `layer({ filename })` is what the server provides; `migrate` is the CLI's `dashstream migrate`; `openStoreCopy` is
 * the `StoreCopy` port of `dashstream copy`.
 */
export { layer, make, type SqliteConfig, type SqliteStores } from "./SqliteStore.js"
export { migrate } from "./Migrations.js"
export { open as openStoreCopy, openSource as openStoreCopySource } from "./SqliteStoreCopy.js"
export { busyHandler, type LockWait } from "./internal/groupCommit.js"
