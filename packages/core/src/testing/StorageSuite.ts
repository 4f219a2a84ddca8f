import { describe, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { accountStoreSuite } from "./storage/AccountStoreSuite.js"
import { directForms } from "./storage/directForms.js"
import type { Stores } from "./storage/fixtures.js"
import { modelSuite } from "./storage/ModelSuite.js"
import { blockSummarySuite } from "./storage/BlockSummarySuite.js"
import { rangeReadProperties, rangeReadSuite } from "./storage/RangeReadSuite.js"
import { streamStoreSuite } from "./storage/StreamStoreSuite.js"

/**
 * The storage contract suite: what every adapter of `AccountStore` and `StreamStore` must do (docs/api.md sections
 * 3, 4, 6 and 7, and the port docs). Each adapter's test file calls {@link storageSuite} with its layer, so the
 * memory, SQLite and PostgreSQL adapters are held to the same behaviour. Its parts, one file each under `storage/`:
 * the `AccountStore` part (accounts, widgets), the `StreamStore` part (write, read), the model properties, the
 * range reads (`StreamStore.readRange`) and their per-block summaries.
 */

/**
 * Registers the storage contract suite twice, under `describe("storage contract: <name>")` and
 * `describe("storage contract, direct forms: <name>")`: once through the ports' effect methods as the adapter gives
 * them, once through their direct forms (`writeDirect`, `readDirect`, and `peekAccount`/`peekWidget` checked against
 * the effect lookups; see {@link directForms}), so that both forms of every step hold to the contract on every
 * adapter. `makeLayer` is called once per test (and once for each shared property-test store) and must give a fresh,
 * empty, migrated store each time.
 */
export const storageSuite = (name: string, makeLayer: () => Layer.Layer<Stores, unknown>): void => {
  const register = (title: string, layerOf: () => Layer.Layer<Stores, unknown>, effectForms: boolean) =>
    describe(title, () => {
      const test = (title: string, body: Effect.Effect<unknown, unknown, Stores>, timeout?: number) =>
        it.effect(title, () => Effect.provide(body, layerOf()), timeout)
      accountStoreSuite(test)
      streamStoreSuite(test)
      modelSuite(layerOf)
      // `readRange` has no direct form: its tests run once.
      if (effectForms) {
        rangeReadSuite(test)
        blockSummarySuite(test)
        rangeReadProperties(layerOf)
      }
    })
  register(`storage contract: ${name}`, makeLayer, true)
  register(`storage contract, direct forms: ${name}`, () => directForms(makeLayer()), false)
}
