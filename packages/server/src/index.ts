/**
 * The composition root of Dashstream: configuration, the `dashstream` command line, and the wiring of the storage
 * and HTTP adapters. `bin.ts` is the executable; these modules are exported for tests and embedding.
 */
export * as Cli from "./Cli.js"
export * as Config from "./Config.js"
export * as Decimation from "./Decimation.js"
export * from "./Errors.js"
export * as Logging from "./Logging.js"
export * as Serve from "./Serve.js"
export * as Storage from "./Storage.js"
