import { Buffer, isAscii } from "node:buffer"
import { Either } from "effect"
import { InvalidRequest, PayloadTooLarge, quoted } from "../Errors.js"
import { FieldKind, type LexerOptions, type LineSink } from "./LineProtocolSink.js"
import { type BodyCodes, copyOf, KnownField, KnownSeries, LineSymbols, sameCodes } from "./LineProtocolSymbols.js"
import { digitsMicros, MAX_MICROS, type Precision } from "./LineProtocolTime.js"

/**
 * The InfluxDB line protocol lexer (docs/protocols.md, "InfluxDB line protocol"): one pass over a body that hands each
 * line's series (measurement and tags), field keys, field values and timestamp to a {@link LineSink}, and knows
 * nothing of what the sink makes of them (stream names, stored entries), as InfluxData's decoder and Prometheus'
 * `textparse` know nothing of theirs. The grammar:
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
 * The lexer is on the ingest hot path: one pass over the body's code units (an ASCII body's bytes, see `BodyCodes`),
 * no regular expression, no object per field (the sink is called with the value's parts), substrings only for names,
 * and number text turned into a double without a substring where that is exact (see `scanNumber`). A body's lines are
 * mostly a few series again and again: a series and its field keys met before in the body are found by their text and
 * cost no substring and no call of the sink, which hands out its handle of them once (see `LineSymbols`, which may keep
 * them from body to body).
 */

export type { BodyCodes }

/**
 * The code units of `body` (see {@link BodyCodes}): `bytes` themselves when they are the ASCII bytes `body` was decoded
 * from; without bytes, the body encoded when it is ASCII; else a copy of its UTF-16 units.
 */
export const bodyCodes = (body: string, bytes: Uint8Array | undefined): BodyCodes => {
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
 * Why the line being scanned is refused (`tooLarge`: the body holds too many field values), thrown from deep in the
 * scan (or by the sink) and caught once in {@link lexLineProtocol}, so that the success path carries no result
 * object per token.
 */
export class LineProblem {
  constructor(
    readonly problem: string,
    readonly tooLarge = false
  ) {}
}

/**
 * Scans `body` (its code units `codes`, see {@link bodyCodes}) into `sink`. Fails with `InvalidRequest` (400) at the
 * first line that does not parse, or whose timestamp is before 1970 or after 2106-02-07T06:28:15Z, or that the sink
 * refuses: its message starts with the line (`line 3: ...`, counting every line of the body from 1) and quotes it, its
 * `path` is `line 3`. Fails with `PayloadTooLarge` (413) when the body holds more than `maxFieldValues` field values
 * (or the sink refuses with `tooLarge`). Without `shortcuts`, series and field keys met before are not found by their
 * text and every timestamp is scanned in full (for tests, which check that both give the same). `symbols` is the
 * table of known series to use (see `LineSymbols`: one kept from body to body, when the sink's handles allow it);
 * without it the body has a table of its own.
 */
export const lexLineProtocol = <S, F>(
  body: string,
  codes: BodyCodes,
  options: LexerOptions,
  sink: LineSink<S, F>,
  shortcuts = true,
  symbols: LineSymbols<S, F> = new LineSymbols(BODY_SLOTS)
): Either.Either<void, InvalidRequest | PayloadTooLarge> => {
  const lexer = new LineProtocolLexer(body, codes, options, sink, shortcuts, symbols)
  try {
    lexer.run()
    return Either.void
  } catch (e) {
    if (e instanceof LineProblem) {
      return Either.left(
        e.tooLarge
          ? new PayloadTooLarge({ message: e.problem })
          : new InvalidRequest({
              message: `line ${lexer.pointLine}: ${e.problem} in ${quoted(lineText(body, lexer.lineStart))}`,
              path: `line ${lexer.pointLine}`
            })
      )
    }
    throw e
  }
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

// Powers of ten exactly representable as doubles, for the fast path of `scanNumber`.
const exactPowersOfTen = Array.from({ length: 23 }, (_, k) => 10 ** k)

// A table of a body's own (a sink whose handles may not be shared, see `LineSymbols`) has this many slots.
const BODY_SLOTS = 256
// At most this many field keys are kept per series (a line may have 100,000 fields).
const MAX_SERIES_FIELDS = 64

/**
 * The scan of one body into one sink (see {@link lexLineProtocol}, which runs it): `run` throws {@link LineProblem} at
 * the first refused line, which `pointLine` and `lineStart` then locate.
 */
export class LineProtocolLexer<S, F> {
  private readonly body: string
  // The body's code units (see `BodyCodes`): what the scan reads; `body` gives the names' and values' text.
  private readonly codes: BodyCodes
  private readonly n: number
  private readonly precision: Precision
  private readonly maxFieldValues: number
  private line = 1
  /** Where the line being scanned starts in the body, and its number (from 1): where a {@link LineProblem} is. */
  lineStart = 0
  pointLine = 1
  // The field values met so far.
  private count = 0
  // The current line's tags, escapes removed; reused from line to line.
  private readonly tagKeys: Array<string> = []
  private readonly tagValues: Array<string> = []
  // The series met so far (see `LineSymbols`), and the sink's handle of the one `seriesAt` just parsed.
  private readonly symbols: LineSymbols<S, F>
  private previous: KnownSeries<S, F> | undefined = undefined
  private handle: S | undefined = undefined
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
    codes: BodyCodes,
    options: LexerOptions,
    private readonly sink: LineSink<S, F>,
    private readonly shortcuts: boolean,
    symbols: LineSymbols<S, F>
  ) {
    this.symbols = symbols
    this.body = body
    this.codes = codes
    this.n = body.length
    this.precision = options.precision
    this.maxFieldValues = options.maxFieldValues
  }

  private fail(problem: string): never {
    throw new LineProblem(problem)
  }

  /** Scans the whole body, handing its series, field keys, values and timestamps to the sink; throws `LineProblem`. */
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
    // (see `KnownSeries`): first the one that followed the previous line's series last time (a body repeats its series in
    // one order), else the one of its hash. Its text is the same and a space follows: its scan would end at that space,
    // with the same result. A series not found is parsed (`seriesAt`), which refuses it as it should.
    const symbols = this.symbols
    const previous = this.previous
    let series =
      this.shortcuts && previous !== undefined && previous.nextSlot !== -1 ? symbols.at(previous.nextSlot) : undefined
    if (
      series !== undefined &&
      !(codes[start + series.text.length]! === SPACE && sameCodes(codes, start, series.text))
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
      const slot = symbols.slotOf(hash)
      if (c === SPACE && this.shortcuts) {
        const known = symbols.at(slot)
        if (known !== undefined && known.text.length === end - start && sameCodes(codes, start, known.text)) {
          series = known
        }
      }
      if (series === undefined) {
        const line = this.line
        end = this.seriesAt(i)
        series = new KnownSeries(slot, copyOf(codes, start, end), this.handle!)
        // A series over an escaped line end is not found again by its text: the lines it spans are counted by the scan.
        if (this.line === line) symbols.keep(series)
      }
    }
    if (previous !== undefined) previous.nextSlot = series.slot
    this.previous = series
    i = start + series.text.length
    let c: number
    // Fields, after the space (and any more spaces, tabs or NULs, as InfluxDB skips them).
    i++
    while (i < n && ((c = codes[i]!) === SPACE || c === TAB || c === NUL)) i++
    if (this.atLineEnd(i)) this.fail("missing fields")
    const sink = this.sink
    const first = this.count
    // The field key at the same place in the series' latest line, and the one before it (kept up to the 64th).
    let known = series.first
    let before: KnownField<F> | undefined = undefined
    for (let f = 0; ; f++) {
      // The field key: the known one when its text is here again (its scan would stop at the same `=`, with the same
      // result), else scanned.
      let fieldKey: string
      let field: F
      const knownLength = known === undefined ? 0 : known.text.length
      if (known !== undefined && codes[i + knownLength]! === EQUALS && sameCodes(codes, i, known.text)) {
        fieldKey = known.key
        field = known.field
        i += knownLength
        before = known
      } else {
        const keyStart = i
        const keyLine = this.line
        i = this.fieldKeyEnd(i)
        fieldKey = this.escaped ? unescapeName(body, keyStart, i, true) : body.slice(keyStart, i)
        field = sink.field(series.handle, fieldKey)
        if (f < MAX_SERIES_FIELDS && this.line === keyLine && symbols.keepField(series.text.length, i - keyStart)) {
          const kept: KnownField<F> = new KnownField(copyOf(codes, keyStart, i), fieldKey, field, known?.next)
          if (before === undefined) series.first = kept
          else before.next = kept
          before = kept
        } else {
          before = undefined
        }
      }
      known = before?.next
      i = this.scanValue(i + 1, fieldKey)
      if (this.count >= this.maxFieldValues) {
        throw new LineProblem(`a write may carry at most ${this.maxFieldValues} field values`, true)
      }
      this.count++
      sink.value(field, fieldKey, this.kind, this.value, this.valueStart, this.valueEnd, this.pointLine, this.plain)
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
    sink.lineTimestamp(first, ts)
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
   * Parses the series (measurement and tags) starting at `i` and hands it to the sink, keeping the sink's handle in
   * `handle`; returns the space after it. Fails as a line's series is refused.
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
    if (c === COMMA) {
      i = this.tags(i + 1)
    } else {
      this.tagKeys.length = 0
      this.tagValues.length = 0
    }
    this.handle = this.sink.series(measurement, this.tagKeys, this.tagValues)
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
   * The timestamp digits `body[i, end)` in `precision` units as microseconds (see `digitsMicros`); fails when they are
   * after {@link MAX_MICROS}, quoting the timestamp `body[start, end)`.
   */
  private digitsMicros(i: number, end: number, start: number): number {
    const micros = digitsMicros(this.body, this.codes, i, end, this.precision)
    if (micros === -1) {
      this.fail(
        `timestamp ${this.body.slice(start, end)} (precision ${this.precision}) is after 2106-02-07T06:28:15Z, the latest time Dashstream stores`
      )
    }
    return micros
  }
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
