import { describe, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { accountStoreSuite } from "./storage/AccountStoreSuite.js"
import type { Stores } from "./storage/fixtures.js"
import { modelSuite } from "./storage/ModelSuite.js"
import { streamStoreSuite } from "./storage/StreamStoreSuite.js"

/**
 * The storage contract suite: what every adapter of `AccountStore` and `StreamStore` must do (contract sections
 * 3, 4, 6 and 7, and the port docs). Each adapter's test file calls {@link storageSuite} with its layer, so the
 * memory, SQLite and PostgreSQL adapters are held to the same behaviour. Its parts, one file each under `storage/`:
 * the `AccountStore` part (accounts, widgets), the `StreamStore` part (write, read) and the model properties.
 */

/**
 * Registers the storage contract suite under `describe("storage contract: <name>")`. `makeLayer` is called once per
 * test (and once for the shared property-test store) and must give a fresh, empty, migrated store each time.
 */
export const storageSuite = (name: string, makeLayer: () => Layer.Layer<Stores, unknown>): void => {
  describe(`storage contract: ${name}`, () => {
    const test = (title: string, body: Effect.Effect<unknown, unknown, Stores>, timeout?: number) =>
      it.effect(title, () => Effect.provide(body, makeLayer()), timeout)
    accountStoreSuite(test)
    streamStoreSuite(test)
    modelSuite(makeLayer)
  })
}
