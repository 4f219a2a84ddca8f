import { Schema } from "effect"

/**
 * How every length rule counts (stream names, account and dashboard names, tile titles): in characters, meaning
 * Unicode code points, as the README and the contract say, not in UTF-16 units (`string.length`), which counts an
 * emoji outside the Basic Multilingual Plane twice. JSON Schema's `maxLength` counts the same way.
 */

/** The number of Unicode code points of `s`: a surrogate pair counts once, a lone surrogate once. */
export const codePointLength = (s: string): number => {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) i++
    }
    n++
  }
  return n
}

/**
 * True when `s` has more than `max` characters (code points). A string of at most `max` UTF-16 units is within it
 * and one of more than `2 * max` is over it whatever it holds: only the strings between are counted.
 */
export const longerThan = (s: string, max: number): boolean =>
  s.length > max && (s.length > 2 * max || codePointLength(s) > max)

/**
 * A filter for string schemas: at most `max` characters (code points), else the issue `message()`. Documented in
 * JSON Schema as `maxLength` (which counts code points too).
 */
export const maxCharacters =
  (max: number, message: () => string) =>
  <A extends string, I, R>(self: Schema.Schema<A, I, R>): Schema.filter<Schema.Schema<A, I, R>> =>
    self.pipe(
      Schema.filter((s) => !longerThan(s, max), {
        message,
        jsonSchema: { maxLength: max },
        description: `at most ${max} characters`
      })
    )
