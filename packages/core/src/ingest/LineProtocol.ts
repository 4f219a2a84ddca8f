import { Buffer, isAscii } from "node:buffer"
import { Either } from "effect"
import { InvalidRequest, PayloadTooLarge, quoted } from "../Errors.js"
import { MAX_STREAM_NAME_LENGTH } from "../StreamName.js"
import { MAX_SECONDS, type Micros, MICROS_PER_SECOND } from "../Time.js"

/**
 * InfluxDB line protocol (contract section 13.1), parsed into a batch of field writes:
 *
 *     measurement[,tag_key=tag_value...] field_key=field_value[,field_key=field_value...] [timestamp]
 *
 * as InfluxDB's reference documents it and InfluxDB 1.x's parser (`models/points.go`) reads it, escapes included: in
 * the measurement, tag keys, tag values and field keys the character after a backslash is escaped (so `\\ ` does not
 * end a name either), and the backslash before `,`, a space, `=` and, in the measurement and field keys, `"` is
 * removed (any other stays); string field values in double quotes with `\"` and `\\` escapes (they may span lines);
 * floats (`1`, `-1.5`, `1.e+78`), integers (`12i`, signed 64-bit), unsigned integers (`12u`, 64-bit), booleans (`t`,
 * `T`, `true`, `True`, `TRUE`, `f`, `F`, `false`, `False`, `FALSE`); `#` comment lines, blank lines, spaces, tabs and
 * NULs before a line's measurement. Deliberately unlike InfluxDB (docs/protocols.md, "Differences from InfluxDB"), a
 * `\r\n` line end is a line end; a bare `\r` is a character of its line, and only spaces may follow a timestamp, as
 * there.
 *
 * The parser is on the ingest hot path: one pass over the body's code units (an ASCII body's bytes, see `BodyCodes`),
 * no regular expression, no object per field (the batch is a set of parallel arrays), substrings only for names, and
 * number text turned into a double without a substring where that is exact (see `scanNumber`). A body's lines are
 * mostly a few series again and again: a series (measurement and tags) and its field keys met before in the body are
 * found by their text and cost no substring, and all the writes of one stream share one name string (see `Series`).
 */

/**
 * The most a line protocol request may carry (contract section 13.1): 10 MiB of body after decompression and 100,000
 * field values (skipped ones included); more is 413.
 */
export const lineProtocolLimits = { maxBytes: 10 * 1024 * 1024, maxFieldValues: 100_000 } as const

/** The unit of a body's timestamps, normalised (`n` is `ns`, `u` is `us`). */
export type Precision = "ns" | "us" | "ms" | "s" | "m" | "h"

/** Which InfluxDB write API a request came by: `v1` is `POST /write`, `v2` is `POST /api/v2/write`. */
export type LineProtocolApi = "v1" | "v2"

const v1Precisions: ReadonlyMap<string, Precision> = new Map<string, Precision>([
  ["n", "ns"],
  ["ns", "ns"],
  ["u", "us"],
  ["us", "us"],
  ["ms", "ms"],
  ["s", "s"],
  ["m", "m"],
  ["h", "h"]
])
const v2Precisions: ReadonlyMap<string, Precision> = new Map<string, Precision>([
  ["ns", "ns"],
  ["us", "us"],
  ["ms", "ms"],
  ["s", "s"]
])

/**
 * The `precision` query parameter of a write (contract section 13.1): 1.x `n`, `ns`, `u`, `us`, `ms`, `s`, `m`, `h`;
 * 2.x `ns`, `us`, `ms`, `s`; absent or empty is nanoseconds. Fails with `InvalidRequest` (400) for any other value.
 */
export const parsePrecision = (
  text: string | null | undefined,
  api: LineProtocolApi
): Either.Either<Precision, InvalidRequest> => {
  if (text === undefined || text === null || text === "") return Either.right("ns")
  const precision = (api === "v1" ? v1Precisions : v2Precisions).get(text)
  if (precision !== undefined) return Either.right(precision)
  const allowed = api === "v1" ? "n, ns, u, us, ms, s, m or h" : "ns, us, ms or s"
  return Either.left(new InvalidRequest({ message: `precision ${quoted(text)} is not one of ${allowed}` }))
}

/** How a field value was written, which decides how it is stored and rendered as text (contract section 13.1). */
export const FieldKind = { Float: 0, Integer: 1, Unsigned: 2, Boolean: 3, String: 4 } as const
export type FieldKind = (typeof FieldKind)[keyof typeof FieldKind]

/** The `timestamps` entry of a field whose line has no timestamp. */
export const NO_TIMESTAMP = -1

/**
 * The field writes of a body, in body order: write `i` is `streams[i]`, `fieldKeys[i]`, ... Parallel arrays rather
 * than an object per write, so that a 100,000-field body costs a few arrays.
 */
export class LineBatch {
  /** The stream of each write (contract 13.1, "Stream of a field"): `cpu.usage_idle{cpu=cpu0,host=web1}`. */
  readonly streams: Array<string> = []
  /** The field key, escapes removed. */
  readonly fieldKeys: Array<string> = []
  readonly kinds: Array<FieldKind> = []
  /**
   * The value as a number: a float as parsed, an integer or unsigned integer as the nearest double, a boolean as 1 or
   * 0; `NaN` for a string.
   */
  readonly numbers: Array<number> = []
  /** The line's timestamp in microseconds (nanoseconds truncated toward zero), or {@link NO_TIMESTAMP}. */
  readonly timestamps: Array<number> = []
  /** The line of the body the write's line starts on, counting every line from 1 (comments, blank lines). */
  readonly lines: Array<number> = []
  // Where each value's text lies in `body` (a string without its quotes), for `text`, which is seldom needed.
  private readonly starts: Array<number> = []
  private readonly ends: Array<number> = []
  /** Whether a number's text is what `String` writes of its value: {@link numberJsonText} has its point's JSON then. */
  readonly plain: Array<boolean> = []

  constructor(
    private readonly body: string,
    private readonly codes: BodyCodes
  ) {}

  /** The number of field writes. */
  get size(): number {
    return this.streams.length
  }

  /** The timestamp of write `i` in microseconds, `undefined` when its line has none (the server assigns `ts`). */
  timestamp(i: number): Micros | undefined {
    const ts = this.timestamps[i]!
    return ts === NO_TIMESTAMP ? undefined : (ts as Micros)
  }

  /**
   * Write `i`'s value as text (contract section 13.1, "As text"): a string as written with its escapes removed, an
   * integer in decimal digits (`12i` is `"12"`, `-007i` is `"-7"`), a float as JavaScript's shortest round-trip form
   * (`1e3` is `"1000"`), a boolean `"true"` or `"false"`.
   */
  text(i: number): string {
    switch (this.kinds[i]!) {
      case FieldKind.Float:
        return String(this.numbers[i]!)
      case FieldKind.Boolean:
        return this.numbers[i] === 1 ? "true" : "false"
      case FieldKind.String:
        return unescapeString(this.body, this.starts[i]!, this.ends[i]!)
      default:
        return integerText(this.body, this.starts[i]!, this.ends[i]!)
    }
  }

  /**
   * The point `{"number": <value>}` of each of `writes` (write indices, any order) as JSON, exactly as `JSON.stringify`
   * (and core's `pointJson`) writes it, where that text is at hand: a float or integer written as `String` writes its
   * value (`97.5`, `-3`, `0.001`, at most 15 significant digits, no exponent, no leading or trailing zeros, not `-0`,
   * see {@link plain}) is copied from the body rather than turned back into digits, which is most of the cost of
   * serialising a number (issue 26). The others (a string, a boolean, any other number text) have none: the caller
   * serialises the value.
   *
   * The texts stand one after another in `writes`' order, in one text written from the body's code units; write `i`'s
   * is `text.slice(start[i], end[i])` (`end[i]` stays 0 for a write without one). A store copying entries into its
   * blocks then reads one run of memory rather than a string per entry somewhere on the heap (issue 26: that copy
   * waited on memory). Slices of the text keep it alive (about 30 bytes a number), not the body: whatever keeps an
   * entry's JSON longer than its write takes a copy (see `mutationChanges`).
   */
  numberJsonText(writes: ReadonlyArray<number>, start: Int32Array, end: Int32Array): string {
    const { plain, starts, ends, codes } = this
    const count = writes.length
    let total = 0
    for (let k = 0; k < count; k++) {
      const i = writes[k]!
      if (plain[i]) total += numberJsonOverhead + ends[i]! - starts[i]!
    }
    if (total === 0) return ""
    const bytes = Buffer.allocUnsafe(total)
    let at = 0
    for (let k = 0; k < count; k++) {
      const i = writes[k]!
      if (!plain[i]) continue
      start[i] = at
      for (let h = 0; h < numberJsonOverhead - 1; h++) bytes[at++] = numberJsonHead[h]!
      // A plain number's text is ASCII (digits, `-`, `.`), a unit a byte whatever the body.
      for (let c = starts[i]!, e = ends[i]!; c < e; c++) bytes[at++] = codes[c]!
      bytes[at++] = CLOSE_BRACE
      end[i] = at
    }
    return bytes.toString("latin1", 0, total)
  }

  /** @internal */
  push(
    stream: string,
    fieldKey: string,
    kind: FieldKind,
    n: number,
    start: number,
    end: number,
    line: number,
    plain: boolean
  ): void {
    this.streams.push(stream)
    this.fieldKeys.push(fieldKey)
    this.kinds.push(kind)
    this.numbers.push(n)
    this.timestamps.push(NO_TIMESTAMP)
    this.lines.push(line)
    this.starts.push(start)
    this.ends.push(end)
    this.plain.push(plain)
  }
}

// `{"number":` and `}` around a number's text: its point's JSON.
const numberJsonHead = Buffer.from('{"number":', "latin1")
const numberJsonOverhead = numberJsonHead.length + 1
const CLOSE_BRACE = 0x7d

/** Options of {@link parseLineProtocol}. */
export interface LineProtocolOptions {
  readonly precision: Precision
  /** At most this many field values per body (contract 13.1: 100,000, skipped ones included); more is 413. */
  readonly maxFieldValues: number
  /**
   * The body's bytes, when the body is their UTF-8 decoding (a request body as received): an ASCII body, which is
   * what agents send, is then scanned over them, a byte a character, rather than through the string (see
   * `BodyCodes`). Without them the parser encodes the body itself.
   */
  readonly bytes?: Uint8Array | undefined
}

/**
 * The body's UTF-16 code units as the parser scans them (`codes[i]` is `body.charCodeAt(i)`): an ASCII body's bytes
 * (a byte is a unit there, so an index into them is an index into the string), else the units copied from the
 * string. Reading a typed array costs about half a `charCodeAt` (issue 26: the scan of a line's series and timestamp
 * was most of the parse).
 */
type BodyCodes = Uint8Array | Uint16Array

const bodyCodes = (body: string, bytes: Uint8Array | undefined): BodyCodes => {
  if (bytes !== undefined && bytes.length === body.length && isAscii(bytes)) return bytes
  if (bytes === undefined) {
    const encoded = Buffer.from(body, "utf8")
    if (encoded.length === body.length && isAscii(encoded)) return encoded
  }
  const codes = new Uint16Array(body.length)
  for (let i = 0; i < body.length; i++) codes[i] = body.charCodeAt(i)
  return codes
}

/**
 * Parses a line protocol body (contract section 13.1) into its field writes, in body order. Fails with
 * `InvalidRequest` (400) at the first line that does not parse, or whose timestamp is before 1970 or after
 * {@link MAX_SECONDS} (section 3): its message starts with the line (`line 3: ...`, counting every line of the body
 * from 1) and quotes it, its `path` is `line 3`. Fails with `PayloadTooLarge` (413) when the body holds more than
 * `maxFieldValues` field values. A body of only comments and blank lines is an empty batch.
 */
export const parseLineProtocol = (
  body: string,
  options: LineProtocolOptions
): Either.Either<LineBatch, InvalidRequest | PayloadTooLarge> => parse(body, options, true)

/**
 * @internal {@link parseLineProtocol} without its shortcuts (series and field keys met before found by their text, a
 * timestamp of only digits read at once): every line scanned in full. For tests, which check that both give the same.
 */
export const parseLineProtocolInFull = (
  body: string,
  options: LineProtocolOptions
): Either.Either<LineBatch, InvalidRequest | PayloadTooLarge> => parse(body, options, false)

const parse = (
  body: string,
  options: LineProtocolOptions,
  shortcuts: boolean
): Either.Either<LineBatch, InvalidRequest | PayloadTooLarge> => {
  const parser = new Parser(body, options, shortcuts)
  try {
    parser.run()
    return Either.right(parser.batch)
  } catch (e) {
    if (e instanceof Failure) {
      return Either.left(
        e.tooLarge
          ? new PayloadTooLarge({ message: e.problem })
          : new InvalidRequest({
              message: `line ${e.line}: ${e.problem} in ${quoted(lineText(body, e.lineStart))}`,
              path: `line ${e.line}`
            })
      )
    }
    throw e
  }
}

// A parse error, thrown from deep in the scan and caught once in `parseLineProtocol`, so that the success path
// carries no result object per token.
class Failure {
  constructor(
    readonly problem: string,
    readonly line: number,
    readonly lineStart: number,
    readonly tooLarge: boolean
  ) {}
}

const LF = 10
const CR = 13
const TAB = 9
const NUL = 0
const SPACE = 32
const QUOTE = 34
const HASH = 35
const COMMA = 44
const MINUS = 45
const DOT = 46
const ZERO = 48
const NINE = 57
const EQUALS = 61
const BACKSLASH = 92

const MAX_MICROS = MAX_SECONDS * MICROS_PER_SECOND

/** The text of the line starting at `start`, without its line end, for error messages. */
const lineText = (body: string, start: number): string => {
  const lf = body.indexOf("\n", start)
  const end = lf === -1 ? body.length : lf
  return body.slice(start, end > start && body.charCodeAt(end - 1) === CR ? end - 1 : end)
}

/**
 * `body[start, end)` with its escapes removed as InfluxDB 1.x removes them (`models/points.go`): every backslash
 * followed by `,`, a space or `=` is dropped, and also by `"` when `quote` (a measurement or a field key; not a tag key
 * or value); any other backslash stays. Each backslash is judged by the character after it alone, so `\\ ` is a
 * backslash and a space.
 */
const unescapeName = (body: string, start: number, end: number, quote: boolean): string => {
  let out = ""
  let from = start
  for (let i = start; i < end - 1; i++) {
    if (body.charCodeAt(i) !== BACKSLASH) continue
    const next = body.charCodeAt(i + 1)
    if (next === COMMA || next === SPACE || next === EQUALS || (quote && next === QUOTE)) {
      out += body.slice(from, i)
      from = i + 1
    }
  }
  return out + body.slice(from, end)
}

/** A string field's text `body[start, end)` (inside its quotes) with `\"` and `\\` unescaped, as InfluxDB does. */
const unescapeString = (body: string, start: number, end: number): string => {
  let out = ""
  let from = start
  for (let i = start; i < end - 1; i++) {
    if (body.charCodeAt(i) !== BACKSLASH) continue
    const next = body.charCodeAt(i + 1)
    if (next === QUOTE || next === BACKSLASH) {
      out += body.slice(from, i)
      from = i + 1
    }
    i++
  }
  return out + body.slice(from, end)
}

/** An integer's digits `body[start, end)` (optional `-`, no suffix) in canonical decimal: no leading zeros, no `-0`. */
const integerText = (body: string, start: number, end: number): string => {
  const negative = body.charCodeAt(start) === MINUS
  let i = negative ? start + 1 : start
  while (i < end - 1 && body.charCodeAt(i) === ZERO) i++
  const digits = body.slice(i, end)
  return negative && digits !== "0" ? `-${digits}` : digits
}

/** `a` compared with `b` in the byte order of their UTF-8 forms (code point order), as Go's `bytes.Compare`. */
const compareUtf8 = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x === y) continue
    // UTF-16 code units sort surrogates (code points above U+FFFF) below U+E000-U+FFFF; UTF-8 sorts them above.
    if (x >= 0xd800) x = x >= 0xe000 ? x - 0x800 : x + 0x2000
    if (y >= 0xd800) y = y >= 0xe000 ? y - 0x800 : y + 0x2000
    return x - y
  }
  return a.length - b.length
}

// Powers of ten exactly representable as doubles, for the fast path of `scanNumber`.
const exactPowersOfTen = Array.from({ length: 23 }, (_, k) => 10 ** k)

/**
 * A series (a line's measurement and tags) met in a body, found again by its text (escapes kept), so that the lines of
 * one series (a body's lines are mostly a few series, again and again) parse their measurement, tags and field keys
 * once and share their stream names: one string per stream, hashed once where it is a map key later (the widget
 * lookups of `UseCases.ingest`).
 */
class Series {
  /** The stream name of every field of a line whose measurement and tags are too long to be in a stream name. */
  readonly shared: string | undefined
  /**
   * The first field key of the series' latest line, which links to the next ones: a line's fields are found again by
   * position (Telegraf writes a series' fields in one order). A list rather than an array: no array per series.
   */
  first: SeriesField | undefined = undefined
  /**
   * The slot (see `SERIES_SLOTS`) of the series of the line after the latest line of this one, -1 before one: a slot
   * rather than the series, so that series displaced from the table are not kept alive through their successors.
   */
  nextSlot = -1

  constructor(
    /** Its slot in the table of series. */
    readonly slot: number,
    /** Where the series' text (escapes kept) first stands in the body, and its length. */
    readonly start: number,
    readonly length: number,
    /** `<measurement>.` and the tags' `{k=v,...}` (`""` without tags), escapes removed. */
    readonly prefix: string,
    readonly suffix: string
  ) {
    // No stream name is longer than 255 characters (510 UTF-16 units). The fields of a line whose measurement and tags
    // are already longer all share one name, which cannot be a stream name (so they are skipped): a name of its own
    // per field would cost time in proportion to the line's length for every field (building and hashing it).
    this.shared = prefix.length + suffix.length > 2 * MAX_STREAM_NAME_LENGTH ? prefix + suffix : undefined
  }
}

/**
 * A field key of a {@link Series}: where its text (escapes kept) stands in the body and its length, the key (escapes
 * removed), its stream's name, and the field key after it in the series' latest line.
 */
class SeriesField {
  constructor(
    readonly start: number,
    readonly length: number,
    readonly key: string,
    readonly stream: string,
    public next: SeriesField | undefined
  ) {}
}

/**
 * True when `body[at, at + length)` is the text `body[known, known + length)`. Compared within the body's code units
 * (see `BodyCodes`) rather than with a substring of it: no allocation.
 */
const sameText = (codes: BodyCodes, known: number, at: number, length: number): boolean => {
  for (let k = 0; k < length; k++) if (codes[at + k] !== codes[known + k]) return false
  return true
}

// The series of a body are kept in a table of this many slots, by a hash of their text; a series displaces the one in
// its slot. A hostile body of distinct series costs a hash and a lookup more per line, and one `Series` per line (the
// batch holds a stream name per field anyway).
const SERIES_SLOTS = 256
const SERIES_SLOTS_MASK = SERIES_SLOTS - 1
// At most this many field keys are kept per series (a line may have 100,000 fields).
const MAX_SERIES_FIELDS = 64

class Parser {
  readonly batch: LineBatch
  private readonly body: string
  // The body's code units (see `BodyCodes`): what the scan reads; `body` gives the names' and values' text.
  private readonly codes: BodyCodes
  private readonly n: number
  private readonly precision: Precision
  private readonly maxFieldValues: number
  private line = 1
  private lineStart = 0
  private pointLine = 1
  // The current line's tags, escapes removed; reused from line to line.
  private readonly tagKeys: Array<string> = []
  private readonly tagValues: Array<string> = []
  private readonly order: Array<number> = []
  // The series met so far (see `Series`), and the parts of the one `seriesAt` just parsed.
  private readonly series: Array<Series | undefined> = new Array(SERIES_SLOTS)
  private previous: Series | undefined = undefined
  private measurementPrefix = ""
  private tagsSuffix = ""
  // The value just scanned by `scanValue`.
  private kind: FieldKind = FieldKind.Float
  private value = 0
  private valueStart = 0
  private valueEnd = 0
  // Whether the number just scanned is written as `String` writes its value (see `LineBatch.numberJsonText`).
  private plain = false
  // Whether the field key just scanned by `fieldKeyEnd` has a backslash.
  private escaped = false

  constructor(
    body: string,
    options: LineProtocolOptions,
    private readonly shortcuts: boolean
  ) {
    this.body = body
    this.codes = bodyCodes(body, options.bytes)
    this.n = body.length
    this.precision = options.precision
    this.maxFieldValues = options.maxFieldValues
    this.batch = new LineBatch(body, this.codes)
  }

  private fail(problem: string): never {
    throw new Failure(problem, this.pointLine, this.lineStart, false)
  }

  run(): void {
    const codes = this.codes
    const n = this.n
    let i = 0
    while (i < n) {
      this.lineStart = i
      this.pointLine = this.line
      let c = codes[i]!
      while (c === SPACE || c === TAB || c === NUL) {
        if (++i === n) return
        c = codes[i]!
      }
      if (c === LF) {
        i++
        this.line++
        continue
      }
      if (c === CR && i + 1 < n && codes[i + 1]! === LF) {
        i += 2
        this.line++
        continue
      }
      if (c === HASH) {
        i = this.pastComment(i)
        continue
      }
      i = this.point(i)
    }
  }

  /**
   * True when `i` is where a line ends: the end of the body, `\n`, or `\r\n` (a bare `\r` is a character of the line,
   * as in InfluxDB).
   */
  private atLineEnd(i: number): boolean {
    if (i >= this.n) return true
    const c = this.codes[i]!
    return c === LF || (c === CR && i + 1 < this.n && this.codes[i + 1]! === LF)
  }

  /**
   * Past the comment line starting at `i` (its `#`), where InfluxDB 1.x's line splitting (`scanLine`) ends it: at a
   * `\n`, reading a backslash and the character after it as a pair, and, after the line's first space, a `"` that follows more
   * `=` than `,` as the start or end of a quoted string, in which a `\n` does not end the line. So `# a="b` runs on to
   * the next `"` of the body, as in InfluxDB. Counts the lines passed.
   */
  private pastComment(i: number): number {
    const codes = this.codes
    const n = this.n
    let quoted = false
    // InfluxDB's scan starts at the line's start: a space before the `#` counts.
    let fields = false
    for (let k = this.lineStart; k < i; k++) if (codes[k]! === SPACE) fields = true
    let equals = 0
    let commas = 0
    for (; i < n; i++) {
      const c = codes[i]!
      if (c === BACKSLASH && i + 2 < n) {
        if (codes[++i]! === LF) this.line++
      } else if (c === LF) {
        this.line++
        if (!quoted) return i + 1
      } else if (fields || (fields = c === SPACE)) {
        if (!quoted && c === EQUALS) equals++
        else if (!quoted && c === COMMA) commas++
        else if (c === QUOTE && equals > commas) quoted = !quoted
      }
    }
    return n
  }

  /**
   * True when the `\n` at `lf` does not end its line: InfluxDB 1.x splits a body into lines reading a backslash and the
   * character after it as a pair (`scanLine`), so a `\n` after an odd run of backslashes is part of the line, unless
   * it is the body's last character.
   */
  private escapedLineFeed(lf: number): boolean {
    const codes = this.codes
    let run = lf
    while (run > 0 && codes[run - 1]! === BACKSLASH) run--
    return ((lf - run) & 1) === 1 && lf + 1 < this.n
  }

  /**
   * Past the character that the backslash at `i` escapes in a measurement, a tag or a field key: InfluxDB 1.x reads a
   * character after a backslash as escaped (`scanMeasurement`, `scanTagsKey`, `scanTo`: "the byte before is not a
   * backslash"), so after a run of backslashes (`\\ `) the next character is escaped too. A line end is not passed
   * over: the index of the `\n` (or the body's end) is returned, unless {@link escapedLineFeed} (then the line goes
   * on, and is counted).
   */
  private pastEscape(i: number): number {
    const codes = this.codes
    const n = this.n
    do i++
    while (i < n && codes[i]! === BACKSLASH)
    if (i >= n) return n
    if (codes[i]! === LF) {
      if (!this.escapedLineFeed(i)) return i
      this.line++
    }
    return i + 1
  }

  /** Past the line end at `i` (which `atLineEnd` accepted): the start of the next line. */
  private nextLine(i: number): number {
    if (i >= this.n) return i
    this.line++
    return this.codes[i]! === LF ? i + 1 : i + 2
  }

  /** Parses the point whose measurement starts at `i`; returns the start of the next line. */
  private point(i: number): number {
    const body = this.body
    const codes = this.codes
    const n = this.n
    const start = i
    // A series (measurement and tags) already met in this body is found by its text instead of being parsed again
    // (see `Series`): first the one that followed the previous line's series last time (a body repeats its series in
    // one order), else the one of its hash. Its text is the same and a space follows: its scan would end at that space,
    // with the same result. A series not found is parsed (`seriesAt`), which refuses it as it should.
    const previous = this.previous
    let series =
      this.shortcuts && previous !== undefined && previous.nextSlot !== -1 ? this.series[previous.nextSlot] : undefined
    if (
      series !== undefined &&
      !(codes[start + series.length]! === SPACE && sameText(codes, series.start, start, series.length))
    ) {
      series = undefined
    }
    if (series === undefined) {
      // The series ends at the first space that is not escaped, the scan skipping a run of backslashes and the
      // character after it as `seriesAt` does; one reaching a `\n` is not looked up (`seriesAt` reads it).
      let c = codes[i]!
      let hash = 0
      let end = i
      while (end < n && c !== SPACE && c !== LF) {
        if (c === BACKSLASH) {
          do {
            hash = (Math.imul(hash, 31) + c) | 0
            c = codes[++end]!
          } while (c === BACKSLASH)
          if (end >= n || c === LF) break
        }
        hash = (Math.imul(hash, 31) + c) | 0
        c = codes[++end]!
      }
      const slot = (hash ^ (hash >>> 8) ^ (hash >>> 16)) & SERIES_SLOTS_MASK
      if (c === SPACE && this.shortcuts) {
        const known = this.series[slot]
        if (known !== undefined && known.length === end - start && sameText(codes, known.start, start, end - start)) {
          series = known
        }
      }
      if (series === undefined) {
        const line = this.line
        end = this.seriesAt(i)
        series = new Series(slot, start, end - start, this.measurementPrefix, this.tagsSuffix)
        // A series over an escaped line end is not found again by its text: the lines it spans are counted by the scan.
        if (this.line === line) this.series[slot] = series
      }
    }
    if (previous !== undefined) previous.nextSlot = series.slot
    this.previous = series
    i = start + series.length
    let c: number
    // Fields, after the space (and any more spaces, tabs or NULs, as InfluxDB skips them).
    i++
    while (i < n && ((c = codes[i]!) === SPACE || c === TAB || c === NUL)) i++
    if (this.atLineEnd(i)) this.fail("missing fields")
    const batch = this.batch
    const first = batch.size
    // The field key at the same place in the series' latest line, and the one before it (kept up to the 64th).
    let known = series.first
    let before: SeriesField | undefined = undefined
    for (let f = 0; ; f++) {
      // The field key: the known one when its text is here again (its scan would stop at the same `=`, with the same
      // result), else scanned.
      let fieldKey: string
      let stream: string
      if (known !== undefined && codes[i + known.length]! === EQUALS && sameText(codes, known.start, i, known.length)) {
        fieldKey = known.key
        stream = known.stream
        i += known.length
        before = known
      } else {
        const keyStart = i
        const keyLine = this.line
        i = this.fieldKeyEnd(i)
        fieldKey = this.escaped ? unescapeName(body, keyStart, i, true) : body.slice(keyStart, i)
        stream = series.shared ?? series.prefix + fieldKey + series.suffix
        if (f < MAX_SERIES_FIELDS && this.line === keyLine) {
          const kept: SeriesField = new SeriesField(keyStart, i - keyStart, fieldKey, stream, known?.next)
          if (before === undefined) series.first = kept
          else before.next = kept
          before = kept
        } else {
          before = undefined
        }
      }
      known = before?.next
      i = this.scanValue(i + 1, fieldKey)
      if (batch.size >= this.maxFieldValues) {
        throw new Failure(
          `a write may carry at most ${this.maxFieldValues} field values`,
          this.pointLine,
          this.lineStart,
          true
        )
      }
      batch.push(stream, fieldKey, this.kind, this.value, this.valueStart, this.valueEnd, this.pointLine, this.plain)
      if (i >= n) return n
      c = codes[i]!
      if (c === COMMA) {
        i++
        continue
      }
      if (c === SPACE) break
      // `scanValue` stops only at a comma, a space or a line end.
      return this.nextLine(i)
    }
    // Timestamp, after the space (and any more spaces, tabs or NULs).
    i++
    while (i < n && ((c = codes[i]!) === SPACE || c === TAB || c === NUL)) i++
    if (this.atLineEnd(i)) return this.nextLine(i)
    const tsStart = i
    // Digits up to a space or a line end (the usual timestamp) are read as they are scanned: `value` is their
    // value, `before3` that of all but the last three (nanoseconds to microseconds), exact while within
    // `MAX_MICROS`. Anything else goes the long way: the scan that finds where the timestamp ends, then
    // `timestampMicros` or `digitsMicros`, which refuse it as they should.
    let value = 0
    let before1 = 0
    let before2 = 0
    let before3 = 0
    while (i < n && (c = codes[i]!) >= ZERO && c <= NINE) {
      before3 = before2
      before2 = before1
      before1 = value
      value = value * 10 + (c - ZERO)
      i++
    }
    let ts: number
    if (this.shortcuts && i > tsStart && (i === n || c === SPACE || c === LF || (c === CR && this.atLineEnd(i)))) {
      const precision = this.precision
      if (precision === "ns" && before3 < MAX_MICROS) ts = before3
      else if (precision === "us" && value <= MAX_MICROS) ts = value
      else ts = this.digitsMicros(tsStart, i, tsStart)
    } else {
      while (i < n && (c = codes[i]!) !== SPACE && !this.atLineEnd(i)) i++
      ts = this.timestampMicros(tsStart, i)
    }
    // Only spaces after a timestamp, as InfluxDB allows (a tab there is refused).
    while (i < n && codes[i]! === SPACE) i++
    if (!this.atLineEnd(i)) this.fail("unexpected text after the timestamp")
    const timestamps = batch.timestamps
    for (let k = first; k < timestamps.length; k++) timestamps[k] = ts
    return this.nextLine(i)
  }

  /**
   * The `=` ending the field key that starts at `i` (scanned in full: not one met before in its series), setting
   * `escaped` when the key has a backslash. Fails when there is none before a `,`, a space or the line's end.
   */
  private fieldKeyEnd(i: number): number {
    const codes = this.codes
    const n = this.n
    const keyStart = i
    this.escaped = false
    let c = codes[i]!
    if (c === EQUALS) this.fail("missing field key")
    for (;;) {
      if (i >= n || c === LF || c === SPACE || c === COMMA) {
        const key = this.body.slice(keyStart, i)
        this.fail(key === "" ? "missing field key" : `field ${quoted(key)} has no value (expected key=value)`)
      }
      if (c === BACKSLASH) {
        this.escaped = true
        const run = i
        i = this.pastEscape(i)
        // A separator after an even run of backslashes: InfluxDB's two readings of the key differ (`pairedEscape`).
        const d = codes[i - 1]!
        if ((d === EQUALS || d === COMMA || d === SPACE) && ((i - 1 - run) & 1) === 0) {
          i = this.pairedEscape(keyStart, i - 1)
        }
      } else if (c === EQUALS) {
        return i
      } else {
        i++
      }
      c = codes[i]!
    }
  }

  /**
   * InfluxDB 1.x reads a field key twice, and the two readings differ after an even run of backslashes: its field scan
   * (`scanFields`) reads backslashes as pairs, so a `,`, space or `=` after such a run is not escaped there, while the
   * field iterator (`scanTo`) reads it as escaped, part of the key. A line is stored only when both readings accept it,
   * under the iterator's key. `at` is the character after the run; returns where the key's scan goes on:
   * - after a space or a `,` the field scan finds a key without a value: refused;
   * - after an `=` the field scan reads a value, which must be one (a number, a boolean or a string) followed by a `,`
   *   (`f\\=1,g=2` is the field `f\=1,g` with the value 2); the key goes on after that comma.
   */
  private pairedEscape(keyStart: number, at: number): number {
    const key = this.body.slice(keyStart, at)
    if (this.codes[at]! !== EQUALS) this.fail(`field ${quoted(key)} has no value (expected key=value)`)
    const end = this.scanValue(at + 1, key)
    if (end >= this.n || this.codes[end]! !== COMMA) {
      this.fail(`field ${quoted(this.body.slice(keyStart, end))} has no value (expected key=value)`)
    }
    return end + 1
  }

  /**
   * Parses the series (measurement and tags) starting at `i` into `measurementPrefix` (`cpu.`) and `tagsSuffix`
   * (`{cpu=cpu0,host=web1}`, `""` without tags); returns the space after it. Fails as a line's series is refused.
   */
  private seriesAt(i: number): number {
    const body = this.body
    const codes = this.codes
    const n = this.n
    // Measurement: up to an unescaped `,` (tags follow) or space (fields follow).
    const start = i
    let escaped = false
    let c = codes[i]!
    if (c === COMMA) this.fail("missing measurement")
    for (;;) {
      if (i >= n || c === LF) this.fail("missing fields")
      if (c === BACKSLASH) {
        escaped = true
        i = this.pastEscape(i)
      } else if (c === COMMA || c === SPACE) {
        break
      } else {
        i++
      }
      c = codes[i]!
    }
    const measurement = escaped ? unescapeName(body, start, i, true) : body.slice(start, i)
    this.measurementPrefix = measurement + "."
    this.tagsSuffix = ""
    if (c === COMMA) {
      i = this.tags(i + 1)
      this.tagsSuffix = this.tagSuffix()
    }
    return i
  }

  /** Scans the tag set from `i` (just past the measurement's comma) into `tagKeys`/`tagValues`; returns the space. */
  private tags(i: number): number {
    const body = this.body
    const codes = this.codes
    const n = this.n
    const keys = this.tagKeys
    const values = this.tagValues
    keys.length = 0
    values.length = 0
    for (;;) {
      const keyStart = i
      let escaped = false
      let c = i < n ? codes[i]! : LF
      if (c === SPACE || c === COMMA || c === EQUALS || c === LF) this.fail("missing tag key")
      for (;;) {
        if (i >= n || c === LF || c === SPACE || c === COMMA) {
          this.fail(`tag ${quoted(body.slice(keyStart, i))} has no value`)
        }
        if (c === BACKSLASH) {
          escaped = true
          i = this.pastEscape(i)
        } else if (c === EQUALS) {
          break
        } else {
          i++
        }
        c = codes[i]!
      }
      const key = escaped ? unescapeName(body, keyStart, i, false) : body.slice(keyStart, i)
      i++
      const valueStart = i
      escaped = false
      c = i < n ? codes[i]! : LF
      if (c === SPACE || c === COMMA || c === LF) this.fail(`tag ${quoted(key)} has an empty value`)
      // InfluxDB reads a tag value's first character as part of it whatever it is (`t==v` is the value `=v`).
      if (c === EQUALS) c = codes[++i]!
      for (;;) {
        if (i >= n || c === LF) this.fail("missing fields")
        if (c === BACKSLASH) {
          escaped = true
          i = this.pastEscape(i)
        } else if (c === COMMA || c === SPACE) {
          break
        } else if (c === EQUALS) {
          this.fail(`tag ${quoted(key)} has an unescaped "=" in its value`)
        } else {
          i++
        }
        c = codes[i]!
      }
      keys.push(key)
      values.push(escaped ? unescapeName(body, valueStart, i, false) : body.slice(valueStart, i))
      if (c === SPACE) return i
      i++
    }
  }

  /** `{k=v,...}` of the current line's tags in byte order of their keys; fails on a duplicate key. */
  private tagSuffix(): string {
    const keys = this.tagKeys
    const values = this.tagValues
    const count = keys.length
    let sorted = true
    for (let k = 1; k < count; k++) {
      const cmp = compareUtf8(keys[k - 1]!, keys[k]!)
      if (cmp === 0) this.fail(`duplicate tag ${quoted(keys[k]!)}`)
      if (cmp > 0) sorted = false
    }
    let suffix = "{"
    if (sorted) {
      for (let k = 0; k < count; k++) suffix += (k === 0 ? "" : ",") + keys[k] + "=" + values[k]
      return suffix + "}"
    }
    const order = this.order
    order.length = 0
    if (count <= 16) {
      // Insertion sort: a line has few tags, and Telegraf sends them sorted already.
      for (let k = 0; k < count; k++) {
        let j = k
        while (j > 0 && compareUtf8(keys[order[j - 1]!]!, keys[k]!) > 0) {
          order[j] = order[j - 1]!
          j--
        }
        order[j] = k
      }
    } else {
      // Many tags (a hostile body may hold a million on one line): n log n, not n^2.
      for (let k = 0; k < count; k++) order.push(k)
      order.sort((a, b) => compareUtf8(keys[a]!, keys[b]!))
    }
    for (let k = 1; k < count; k++) {
      if (keys[order[k - 1]!] === keys[order[k]!]) this.fail(`duplicate tag ${quoted(keys[order[k]!]!)}`)
    }
    for (let k = 0; k < count; k++) suffix += (k === 0 ? "" : ",") + keys[order[k]!] + "=" + values[order[k]!]
    return suffix + "}"
  }

  /**
   * Scans the field value starting at `i` into `kind`, `value`, `valueStart`, `valueEnd`; returns where it ends, which
   * is a comma, a space or a line end.
   */
  private scanValue(i: number, fieldKey: string): number {
    const body = this.body
    const codes = this.codes
    const n = this.n
    if (this.atLineEnd(i)) this.fail(`field ${quoted(fieldKey)} has no value`)
    const c = codes[i]!
    if (c === SPACE || c === COMMA) this.fail(`field ${quoted(fieldKey)} has no value`)
    if (c === QUOTE) {
      let j = i + 1
      for (;;) {
        if (j >= n) this.fail(`unbalanced quotes in the value of field ${quoted(fieldKey)}`)
        const d = codes[j]!
        if (d === QUOTE) break
        if (d === BACKSLASH) {
          if (codes[j + 1]! === LF) this.line++
          j += 2
          continue
        }
        if (d === LF) this.line++
        j++
      }
      this.kind = FieldKind.String
      this.plain = false
      this.value = NaN
      this.valueStart = i + 1
      this.valueEnd = j
      if (!this.endsValue(j + 1)) {
        this.fail(`unexpected ${quoted(body.slice(j + 1, j + 2))} after the string value of field ${quoted(fieldKey)}`)
      }
      return j + 1
    }
    if ((c >= ZERO && c <= NINE) || c === MINUS || c === DOT) return this.scanNumber(i, fieldKey)
    let end = i
    while (!this.endsValue(end)) end++
    const word = body.slice(i, end)
    const truth = booleans.get(word)
    if (truth === undefined) {
      this.fail(
        `invalid value ${quoted(word)} of field ${quoted(fieldKey)}: expected a number (1.5, 12i, 12u), ` +
          `a boolean (true, false) or a double-quoted string`
      )
    }
    this.kind = FieldKind.Boolean
    this.plain = false
    this.value = truth ? 1 : 0
    this.valueStart = i
    this.valueEnd = end
    return end
  }

  /**
   * Scans a number from `i`: a float (`-?digits[.digits][e[+-]digits]`, or starting with `.`), an integer (`12i`,
   * signed 64-bit) or an unsigned integer (`12u`, 64-bit). A float whose digits fit in 2^53 and whose decimal exponent
   * is within 22 is computed as one exact product or quotient of two doubles, which rounds correctly (Clinger's fast
   * path); any other goes through `Number` of its text.
   */
  private scanNumber(i: number, fieldKey: string): number {
    const body = this.body
    const codes = this.codes
    const start = i
    let c = codes[i]!
    const negative = c === MINUS
    if (negative) c = codes[++i]!
    // The digits, counting the significant ones (from the first that is not 0): leading zeros are skipped first.
    let mantissa = 0
    const intStart = i
    while (c === ZERO) c = codes[++i]!
    const significantStart = i
    while (c >= ZERO && c <= NINE) {
      mantissa = mantissa * 10 + (c - ZERO)
      c = codes[++i]!
    }
    const intEnd = i
    let significant = intEnd - significantStart
    let digits = intEnd - intStart
    let fractionDigits = 0
    let isFloatSyntax = false
    // Whether the digits are written as `String` writes the value (see `LineBatch.numberJsonText`): an integer part
    // without leading zeros (or `0` alone), a fraction that does not end in 0, and below 1 at most five zeros
    // after the point (`String` writes 1e-7 in exponent form).
    let plain = intEnd > intStart && (significantStart === intStart || intEnd - intStart === 1)
    if (c === DOT) {
      isFloatSyntax = true
      c = codes[++i]!
      const fractionStart = i
      if (significant === 0) while (c === ZERO) c = codes[++i]!
      const fractionSignificantStart = i
      while (c >= ZERO && c <= NINE) {
        mantissa = mantissa * 10 + (c - ZERO)
        c = codes[++i]!
      }
      fractionDigits = i - fractionStart
      plain &&= fractionDigits > 0 && codes[i - 1]! !== ZERO && fractionSignificantStart - fractionStart <= 5
      significant += i - fractionSignificantStart
      digits += fractionDigits
    }
    // At most 15 significant digits: every such decimal is the shortest text of its double (DBL_DIG), so `String`
    // writes these digits again; `-0` is written `0`.
    plain &&= significant <= 15 && !(negative && mantissa === 0)
    if (digits === 0) this.invalidNumber(start, fieldKey)
    let exponent = 0
    if (c === 101 /* e */ || c === 69 /* E */) {
      isFloatSyntax = true
      plain = false
      c = codes[++i]!
      let expNegative = false
      if (c === 43 /* + */ || c === MINUS) {
        expNegative = c === MINUS
        c = codes[++i]!
      }
      let expDigits = 0
      while (c >= ZERO && c <= NINE) {
        // Beyond 1e6 the value is 0 or infinite whatever the mantissa; keep the sum exact below that.
        if (exponent < 1e6) exponent = exponent * 10 + (c - ZERO)
        expDigits++
        c = codes[++i]!
      }
      if (expDigits === 0) this.invalidNumber(start, fieldKey)
      if (expNegative) exponent = -exponent
    }
    if (c === 105 /* i */ || c === 117 /* u */) {
      if (isFloatSyntax) this.invalidNumber(start, fieldKey)
      const unsigned = c === 117
      if (unsigned && negative) this.invalidNumber(start, fieldKey)
      i++
      this.kind = unsigned ? FieldKind.Unsigned : FieldKind.Integer
      this.plain = plain
      this.valueStart = start
      this.valueEnd = intEnd
      if (significant > 15) {
        // Beyond 15 digits, check the 64-bit range on the digits themselves, then let `Number` round.
        let from = negative ? start + 1 : start
        while (codes[from]! === ZERO) from++
        const text = body.slice(from, intEnd)
        const max = unsigned ? "18446744073709551615" : negative ? "9223372036854775808" : "9223372036854775807"
        if (text.length > max.length || (text.length === max.length && text > max)) {
          this.fail(
            `${unsigned ? "unsigned integer" : "integer"} ${quoted(body.slice(start, i))} of field ` +
              `${quoted(fieldKey)} is out of the 64-bit range`
          )
        }
        this.value = Number(body.slice(start, intEnd))
      } else {
        this.value = negative ? -mantissa : mantissa
      }
      if (!this.endsValue(i)) this.invalidNumber(start, fieldKey)
      return i
    }
    this.kind = FieldKind.Float
    this.plain = plain
    this.valueStart = start
    this.valueEnd = i
    const scale = exponent - fractionDigits
    let value: number
    if (significant <= 15 && scale >= -22 && scale <= 22) {
      value = scale >= 0 ? mantissa * exactPowersOfTen[scale]! : mantissa / exactPowersOfTen[-scale]!
      if (negative) value = -value
    } else {
      value = Number(body.slice(start, i))
    }
    if (!Number.isFinite(value)) {
      this.fail(`float ${quoted(body.slice(start, i))} of field ${quoted(fieldKey)} is out of range`)
    }
    this.value = value
    if (!this.endsValue(i)) this.invalidNumber(start, fieldKey)
    return i
  }

  /** True when `i` ends a field value: a comma, a space or a line end. */
  private endsValue(i: number): boolean {
    if (i >= this.n) return true
    const c = this.codes[i]!
    return c === COMMA || c === SPACE || this.atLineEnd(i)
  }

  private invalidNumber(start: number, fieldKey: string): never {
    let end = start
    while (!this.endsValue(end)) end++
    return this.fail(`invalid number ${quoted(this.body.slice(start, end))} in field ${quoted(fieldKey)}`)
  }

  /**
   * The timestamp `body[start, end)` (an optional `-` and digits, in `precision` units) in microseconds, nanoseconds
   * truncated toward zero. Exact: a nanosecond timestamp's last three digits are dropped rather than divided, so no
   * double ever holds more than 2^53; every accepted value is at most {@link MAX_MICROS}.
   */
  private timestampMicros(start: number, end: number): number {
    const body = this.body
    const codes = this.codes
    let i = start
    const negative = codes[i]! === MINUS
    if (negative) i++
    if (i === end) this.fail(`invalid timestamp ${quoted(body.slice(start, end))}: expected an integer`)
    let zero = true
    for (let k = i; k < end; k++) {
      const c = codes[k]!
      if (c < ZERO || c > NINE) this.fail(`invalid timestamp ${quoted(body.slice(start, end))}: expected an integer`)
      if (c !== ZERO) zero = false
    }
    if (zero) return 0
    if (negative) this.fail(`timestamp ${body.slice(start, end)} is before 1970`)
    return this.digitsMicros(i, end, start)
  }

  /**
   * The timestamp digits `body[i, end)` in `precision` units as microseconds (see `timestampMicros`); fails when they
   * are after {@link MAX_MICROS}, quoting the timestamp `body[start, end)`.
   */
  private digitsMicros(i: number, end: number, start: number): number {
    const body = this.body
    const codes = this.codes
    const precision = this.precision
    let micros: number
    switch (precision) {
      case "ns": {
        const cut = end - 3
        micros = cut <= i ? 0 : digitsValue(body, i, cut, MAX_MICROS)
        if (micros === MAX_MICROS) {
          for (let k = Math.max(cut, i); k < end; k++) if (codes[k]! !== ZERO) micros = -1
        }
        break
      }
      case "us":
        micros = digitsValue(body, i, end, MAX_MICROS)
        break
      default: {
        const unit = unitMicros[precision]
        const value = digitsValue(body, i, end, Math.floor(MAX_MICROS / unit))
        micros = value === -1 ? -1 : value * unit
      }
    }
    if (micros === -1) {
      this.fail(
        `timestamp ${body.slice(start, end)} (precision ${precision}) is after 2106-02-07T06:28:15Z, the latest time Dashstream stores`
      )
    }
    return micros
  }
}

const unitMicros: Record<"ms" | "s" | "m" | "h", number> = {
  ms: 1_000,
  s: MICROS_PER_SECOND,
  m: 60 * MICROS_PER_SECOND,
  h: 3600 * MICROS_PER_SECOND
}

/**
 * The decimal digits `body[start, end)` as a number, or -1 when it exceeds `limit`. The limit is below 2^53, so every
 * value up to it is accumulated exactly, and the first step past it (exact or not) is still above it.
 */
const digitsValue = (body: string, start: number, end: number, limit: number): number => {
  let value = 0
  for (let k = start; k < end; k++) {
    value = value * 10 + (body.charCodeAt(k) - ZERO)
    if (value > limit) return -1
  }
  return value
}

const booleans: ReadonlyMap<string, boolean> = new Map([
  ["t", true],
  ["T", true],
  ["true", true],
  ["True", true],
  ["TRUE", true],
  ["f", false],
  ["F", false],
  ["false", false],
  ["False", false],
  ["FALSE", false]
])
