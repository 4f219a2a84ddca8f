import type { Precision } from "./LineProtocolTime.js"

/**
 * What the line protocol lexer (`LineProtocolLexer.ts`) hands a body's lines to: a {@link LineSink}, which makes of
 * them what its dialect's consumer needs (`LineProtocolBatch.ts`: stream names and stored entries).
 */

/** How a field value was written, which decides how it is stored and rendered as text (docs/protocols.md). */
export const FieldKind = { Float: 0, Integer: 1, Unsigned: 2, Boolean: 3, String: 4 } as const
export type FieldKind = (typeof FieldKind)[keyof typeof FieldKind]

/** The timestamp of a line that has none (the server assigns one). */
export const NO_TIMESTAMP = -1

/**
 * What a body's lines are handed to, in body order. `S` is the sink's handle of a series, `F` of a field key of a
 * series; the lexer keeps both for the series and keys it finds again, so the sink sees each once per body (or once
 * per line for a body of ever new series). A method may throw `LineProblem` (`LineProtocolLexer.ts`) to refuse the line being scanned.
 */
export interface LineSink<S, F> {
  /**
   * A series (a line's measurement and tags, escapes removed, the tags in body order) not met before in the body.
   * The arrays are the lexer's, reused for the next series: read them, do not keep them.
   */
  series(measurement: string, tagKeys: ReadonlyArray<string>, tagValues: ReadonlyArray<string>): S
  /** A field key (escapes removed) of `series` not met before at its place in the series' lines. */
  field(series: S, key: string): F
  /**
   * A field value, of the field `field` (whose key is `key`): its `kind`, its value as a number (a float as parsed, an
   * integer or unsigned integer as the nearest double, a boolean 1 or 0, `NaN` for a string), where its text stands in
   * the body (`start` to `end`: a string without its quotes, an integer without its suffix), the line it starts on
   * (from 1), and whether it is a number whose text is what `String` writes of its value (`97.5`, `-3`, `0.001`: at
   * most 15 significant digits, no exponent, no leading or trailing zeros, not `-0`). The line's timestamp follows.
   */
  value(
    field: F,
    key: string,
    kind: FieldKind,
    value: number,
    start: number,
    end: number,
    line: number,
    plain: boolean
  ): void
  /**
   * The timestamp of the line whose values are the `first`th (from 0, counting the body's values) and those after, in
   * microseconds (nanoseconds truncated toward zero), between 0 and 2106-02-07T06:28:15Z. Not called for a line
   * without one.
   */
  lineTimestamp(first: number, micros: number): void
}

/** What the lexer reads a body with. */
export interface LexerOptions {
  /** The unit of the body's timestamps. */
  readonly precision: Precision
  /** At most this many field values per body (skipped ones included); one more is `PayloadTooLarge`. */
  readonly maxFieldValues: number
}
