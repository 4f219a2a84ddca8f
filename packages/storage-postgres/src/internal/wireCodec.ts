import pg from "pg"

/**
 * The wire codec of the PostgreSQL group commit's statements: texts and numbers as SQL literals of arrays (a simple
 * query takes no parameters), and numbers and bytes as binary array parameters. String literals are `pg`'s own
 * `escapeLiteral`.
 */

/**
 * A SQL string literal of `text` (`pg`'s `escapeLiteral`): quotes doubled; with a backslash, the ` E''` form with
 * backslashes doubled.
 */
export const sqlLiteral = (text: string): string => pg.escapeLiteral(text)

/**
 * The text of a PostgreSQL array of `texts` (what `'...'::text[]` parses): each element double-quoted, with
 * backslashes and `"` escaped by a backslash.
 *
 * That is what `JSON.stringify` does to an array of strings, as long as it writes no other escape (`\n`, `\u0001`:
 * a control character or a lone surrogate, which PostgreSQL would read as the letter after the backslash), so the
 * native `JSON.stringify` builds it, about 20 times faster than a loop; the loop is kept for texts it cannot take.
 * Stored points are JSON texts, which hold no control character and no lone surrogate.
 */
export const textArrayText = (texts: ReadonlyArray<string>): string => {
  const json = JSON.stringify(texts)
  // A backslash before b, f, n, r, t or u begins an escape PostgreSQL reads otherwise (or is an escaped backslash
  // before one of those letters: then the loop is taken though the JSON would do).
  if (!/\\[bfnrtu]/.test(json)) return `{${json.slice(1, -1)}}`
  let body = ""
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i]!
    const quoted = t.includes("\\") || t.includes('"') ? t.replace(/[\\"]/g, "\\$&") : t
    body += i === 0 ? `"${quoted}"` : `,"${quoted}"`
  }
  return `{${body}}`
}

/** A `text[]` literal of `texts` (see {@link textArrayText}), the whole a SQL literal. */
export const textArray = (texts: ReadonlyArray<string>): string => `${sqlLiteral(textArrayText(texts))}::text[]`

/** The text of a PostgreSQL array of numbers (finite; `null` as `NULL`). */
export const numberArrayText = (numbers: ReadonlyArray<number | null>): string => {
  // `join` writes each number as `String` does, and nothing for null: taken when there is none.
  if (!numbers.includes(null)) return `{${numbers.join(",")}}`
  let body = ""
  for (let i = 0; i < numbers.length; i++) {
    const n = numbers[i]
    body += (i === 0 ? "" : ",") + (n === null || n === undefined ? "NULL" : String(n))
  }
  return `{${body}}`
}

const INT8_OID = 20
const FLOAT8_OID = 701

/**
 * A one-dimensional PostgreSQL array of `numbers` in the binary format `array_recv` reads (a parameter `pg` sends
 * as binary because it is a `Buffer`): a 20-byte header (dimensions 1, a has-null flag, the element type's OID, the
 * length, lower bound 1), then per element its length (-1 for null) and its 8 bytes, big-endian. About ten times
 * cheaper to build than the text of {@link numberArrayText} for microsecond times (no number-to-text conversion),
 * and cheaper for the server to read (no text to parse).
 *
 * `type` is `bigint` (every number a safe integer, else it throws) or `float8`.
 */
export const numberArrayBinary = (numbers: ReadonlyArray<number | null>, type: "bigint" | "float8"): Buffer => {
  const count = numbers.length
  let nulls = 0
  for (let i = 0; i < count; i++) if (numbers[i] === null) nulls++
  const buffer = Buffer.allocUnsafe(20 + 12 * count - 8 * nulls)
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength)
  view.setInt32(0, 1)
  view.setInt32(4, nulls > 0 ? 1 : 0)
  view.setInt32(8, type === "bigint" ? INT8_OID : FLOAT8_OID)
  view.setInt32(12, count)
  view.setInt32(16, 1)
  let at = 20
  for (let i = 0; i < count; i++) {
    const n = numbers[i]!
    if (n === null) {
      view.setInt32(at, -1)
      at += 4
      continue
    }
    view.setInt32(at, 8)
    if (type === "float8") view.setFloat64(at + 4, n)
    else {
      if (!Number.isSafeInteger(n)) throw new Error(`${String(n)} is not a safe integer`)
      // The high and low 32 bits of the two's complement: `high` is negative for a negative `n`, `n - high * 2^32`
      // is in [0, 2^32).
      const high = Math.floor(n / 4294967296)
      view.setInt32(at + 4, high)
      view.setUint32(at + 8, n - high * 4294967296)
    }
    at += 12
  }
  return buffer
}

/** A `bigint[]` or `float8[]` literal of numbers (see {@link numberArrayText}). */
export const numberArray = (numbers: ReadonlyArray<number | null>, type: "bigint" | "float8"): string =>
  `'${numberArrayText(numbers)}'::${type}[]`

const BYTEA_OID = 17

/**
 * A one-dimensional PostgreSQL `bytea[]` of `buffers` in the binary format `array_recv` reads (see
 * {@link numberArrayBinary}): the 20-byte header, then per element its length (-1 for null) and its bytes. One copy
 * of each.
 */
export const byteaArrayBinary = (buffers: ReadonlyArray<Buffer | null>): Buffer => {
  let size = 20
  let nulls = false
  for (let i = 0; i < buffers.length; i++) {
    const b = buffers[i]
    if (b === null || b === undefined) nulls = true
    else size += b.length
    size += 4
  }
  const out = Buffer.allocUnsafe(size)
  out.writeInt32BE(1, 0)
  out.writeInt32BE(nulls ? 1 : 0, 4)
  out.writeInt32BE(BYTEA_OID, 8)
  out.writeInt32BE(buffers.length, 12)
  out.writeInt32BE(1, 16)
  let at = 20
  for (let i = 0; i < buffers.length; i++) {
    const b = buffers[i]
    if (b === null || b === undefined) {
      out.writeInt32BE(-1, at)
      at += 4
      continue
    }
    out.writeInt32BE(b.length, at)
    b.copy(out, at + 4)
    at += 4 + b.length
  }
  return out
}
