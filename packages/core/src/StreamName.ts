import { Schema } from "effect"
import { longerThan } from "./TextLength.js"

/** The longest stream name, in characters (Unicode code points, not UTF-16 units). */
export const MAX_STREAM_NAME_LENGTH = 255

/** C0 controls, DEL and C1 controls (U+0000-U+001F, U+007F-U+009F), and `/`. */
const forbidden = /[\u0000-\u001f\u007f-\u009f/]/

/** A UTF-16 surrogate without its pair: the string is not well-formed Unicode and has no UTF-8 form. */
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * True when `s` is 1 to 255 printable ASCII characters other than `/` (U+0020-U+007E): a stream name, decided
 * without the regular expressions below. Almost every name pushed is such a name; checked for each stream of every
 * push, the two regular expressions cost 3-5 µs per 100-stream push.
 */
const isPlainName = (s: string): boolean => {
  const n = s.length
  if (n === 0 || n > MAX_STREAM_NAME_LENGTH) return false
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x20 || c > 0x7e || c === 0x2f) return false
  }
  return true
}

/**
 * Why `s` is not a stream name (docs/api.md section 2), or `undefined` when it is one: it must be 1 to 255 characters
 * (code points), well-formed Unicode (no lone surrogate: such a name cannot be encoded as UTF-8, so backends would
 * store it differently and no push could reach it), with no control character (C0, DEL or C1) and no `/`.
 */
export const streamNameProblem = (s: string): string | undefined => {
  if (isPlainName(s)) return undefined
  if (s.length === 0) return "stream name must not be empty"
  if (longerThan(s, MAX_STREAM_NAME_LENGTH)) return `stream name must be at most ${MAX_STREAM_NAME_LENGTH} characters`
  if (loneSurrogate.test(s)) return "stream name must be well-formed Unicode (it has a lone surrogate)"
  if (forbidden.test(s)) return "stream name must not contain control characters or '/'"
  return undefined
}

/** True when `s` is a valid stream name (see {@link streamNameProblem}). */
export const isStreamName = (s: string): boolean => streamNameProblem(s) === undefined

/**
 * A stream name (docs/api.md section 2): 1 to 255 characters (code points), well-formed Unicode, no control characters
 * (C0, DEL, C1), no `/`. Unique per account; two accounts may use the same name. The one rule for every backend:
 * a name it refuses is never stored, and a push or read naming it finds no widget.
 */
export const StreamName = Schema.String.pipe(
  Schema.filter((s) => streamNameProblem(s) ?? true),
  Schema.brand("StreamName")
)
export type StreamName = typeof StreamName.Type
