/**
 * Test helpers of the storage ports, for adapter and use-case tests (not for production code):
 * - `MemoryStore`: an in-memory adapter of `AccountStore`, `StreamStore`, `DecimationStore`, `DashboardStore`,
 *   `SessionStore` and `AlertStore` (`MemoryStore.layer`).
 * - `storageSuite(name, makeLayer)`: the storage contract suite every adapter's test file runs (its parts, by port,
 *   under `storage/`).
 * - `blockSummaryFallbackSuite(name, make)`: a store that keeps per-block summaries reads them, and reads its blocks
 *   whole when they are NULL.
 * - `decimationSuite(name, makeLayer)`: the contract suite of `DecimationStore`, run the same way.
 * - `dashboardSuite(name, makeLayer)`: the contract suite of `DashboardStore` and of a dashboard's snapshot, run the
 *   same way.
 * - `rotationSuite(name, makeLayer)`: the contract suite of rotations' storage (`DashboardStore.rotations`), run the
 *   same way.
 * - `sharedViewSuite(kind, name, makeLayer)`: the contract every kind of shared view's storage keeps; the two suites
 *   above run it for dashboards and rotations, and write their own cases with the kit it returns (`viewSuiteKit`).
 * - `changeFeedSuite(name, makeLayer)`: the contract suite of `ChangeFeed` (live updates), run the same way.
 * - `sessionSuite(name, makeLayer)`: the contract suite of `SessionStore` (console sign-outs), run the same way.
 * - `alertStoreSuite(name, makeLayer, traits)`: the contract suite of `AlertStore` (alert rules, receivers, the outbox), run
 *   the same way.
 * - `AlertFixtures`: accounts, widgets, receivers and rules made through the ports at fixed times, as the alert store's
 *   suite makes them, for an adapter's own alert tests.
 * - `alertEngineSuite(name, storage)`: the alert engine over a real adapter (catch-up from the cursor at start, two
 *   processes on one database).
 * - `hotPathSetup` / `hotPathWorkload(fixture)`: every hot operation once, for the tests that EXPLAIN each statement an
 *   adapter issues on the hot paths (they must all use an index).
 */
export { alertEngineSuite, type AlertEngineStorage } from "./AlertEngineSuite.js"
export * as AlertFixtures from "./storage/alertFixtures.js"
export { alertStoreSuite, type AlertStoreTraits } from "./storage/AlertStoreSuite.js"
export { changeFeedSuite } from "./ChangeFeedSuite.js"
export { dashboardSuite } from "./DashboardSuite.js"
export { decimationSuite } from "./DecimationSuite.js"
export { type HotPathFixture, hotPathSetup, hotPathWorkload } from "./HotPathWorkload.js"
export * as MemoryStore from "./MemoryStore.js"
export { rotationSuite } from "./RotationSuite.js"
export { sessionSuite } from "./SessionSuite.js"
export { sharedViewSuite, type ViewKindFixture, type ViewSuiteStores } from "./SharedViewSuite.js"
export { storageSuite } from "./StorageSuite.js"
export { blockSummaryFallbackSuite, type SummaryChange } from "./storage/BlockSummarySuite.js"
