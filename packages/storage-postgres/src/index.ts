/**
 * PostgreSQL storage for Dashstream: the storage ports (`StreamStore`, `AccountStore`, `DecimationStore`, and the
 * `ChangeFeed` of live updates over LISTEN/NOTIFY) on Kysely + `pg`, safe for several server processes sharing one
 * database. `parseUrl` reads the `--db` URL, `migrate`
 * brings the schema up to date (run it before `layer`, as `serve` does), `layer` provides the ports, `openStoreCopy`
 * the `StoreCopy` port of `dashstream copy`.
 */
export { layer, make, type PostgresStores } from "./PostgresStore.js"
export { migrate, migrations } from "./Migrate.js"
export { defaults, InvalidPostgresUrl, parseUrl, type PostgresConfig } from "./PostgresConfig.js"
export { PING_TIMEOUT_MS } from "./PostgresStreamStore.js"
export { open as openStoreCopy, openSource as openStoreCopySource } from "./PostgresStoreCopy.js"
