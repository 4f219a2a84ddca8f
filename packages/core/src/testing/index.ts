/**
 * Test helpers of the storage ports, for adapter and use-case tests (not for production code):
 * - `MemoryStore`: an in-memory adapter of `AccountStore`, `StreamStore` and `DecimationStore` (`MemoryStore.layer`).
 * - `storageSuite(name, makeLayer)`: the storage contract suite every adapter's test file runs.
 * - `decimationSuite(name, makeLayer)`: the contract suite of `DecimationStore`, run the same way.
 */
export { decimationSuite } from "./DecimationSuite.js"
export * as MemoryStore from "./MemoryStore.js"
export { storageSuite } from "./StorageSuite.js"
