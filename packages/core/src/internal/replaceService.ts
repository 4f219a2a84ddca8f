import { type Context, Effect, Layer } from "effect"

/**
 * `layer` with the service of `tag` replaced by `wrap` of it (a cache in front of a store); every other service of
 * `layer` passes through unchanged. `layer` is built once: `Layer.merge` lets the right side's service win, and
 * layers are memoised by reference.
 */
export const replaceService = <I, S, ROut, E, RIn>(
  layer: Layer.Layer<ROut | I, E, RIn>,
  tag: Context.Tag<I, S>,
  wrap: (service: S) => S
): Layer.Layer<ROut | I, E, RIn> =>
  Layer.merge(layer, Layer.effect(tag, Effect.map(tag, wrap)).pipe(Layer.provide(layer)))
