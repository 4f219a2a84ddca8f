/**
 * Tile options in the layout editor's inspector. Contract section 15 gives tiles an `options` object (thresholds,
 * min/max, staleAfter); the server does not take options yet, so no editor is registered and the inspector shows
 * none. Options a tile already carries are kept and saved back unchanged.
 *
 * To add one: append a {@link TileOptionEditor} to {@link tileOptionEditors}. The inspector shows every editor whose
 * `appliesTo` accepts the tile's widget type, passes it the tile's current `options` and takes the new object from
 * `onChange` (`undefined` removes the key); a server error whose `path` is `tiles[i].options...` is shown on tile i.
 */
import type { JSX } from "preact"

/** The tile options object (contract section 15), as stored: keys this page does not know are kept as they are. */
export type TileOptions = Readonly<Record<string, unknown>>

/** One option's form in the inspector. */
export interface TileOptionEditor {
  /** The option's key in `options` (`"thresholds"`, `"staleAfter"`). */
  readonly key: string
  /** The widget types the option is allowed on (contract section 15). */
  readonly appliesTo: (type: string) => boolean
  /** The form: the tile's current options, and a setter for the option's new value (`undefined` removes it). */
  readonly Editor: (props: {
    readonly options: TileOptions
    readonly onChange: (value: unknown) => void
  }) => JSX.Element
}

/** The option editors the inspector shows, in order. Empty until the server takes section 15's options. */
export const tileOptionEditors: ReadonlyArray<TileOptionEditor> = []

/** `options` with `key` set to `value` (removed when `undefined`); `undefined` when nothing is left. */
export const withOption = (options: TileOptions | undefined, key: string, value: unknown): TileOptions | undefined => {
  const next: Record<string, unknown> = { ...options }
  if (value === undefined) delete next[key]
  else next[key] = value
  return Object.keys(next).length === 0 ? undefined : next
}
