import { Buffer } from "node:buffer"
import { Either } from "effect"
import type { InvalidRequest, PayloadTooLarge } from "../Errors.js"
import type { Micros } from "../Time.js"
import { type BodyCodes, bodyCodes, lexLineProtocol, LineProblem } from "./LineProtocolLexer.js"
import { FieldKind, type LexerOptions, type LineSink, NO_TIMESTAMP } from "./LineProtocolSink.js"
import { LineSymbols } from "./LineProtocolSymbols.js"
import { DuplicateTag, SeriesName, tagsText } from "./SeriesName.js"

/**
 * A line protocol body as a batch of field writes (docs/api.md, section 13.1): the sink of the lexer
 * (`LineProtocolLexer.ts`) that names each field's stream (`SeriesName.ts`) and keeps its value where the storage of
 * the line protocol request (`LineProtocolRequest.ts`) reads it.
 */

const BACKSLASH = 92
const QUOTE = 34
const MINUS = 45
const ZERO = 48

/**
 * The stream of a field key of a series (docs/api.md, section 13.1, "Stream of a field"), the batch's handle of it: its
 * name, and its index in the {@link LineBatch.names} of the batch being parsed, given when the batch first meets it.
 * The lexer keeps it with the series' field key, also from body to body (see `LineSymbols`), so a stream's name is made
 * once, not once per line or body.
 */
export class FieldStream {
  /** The batch that last gave it an index (see {@link LineBatch}'s `stamp`), and that index. */
  stamp = 0
  index = 0

  constructor(readonly name: string) {}
}

// Numbers the batches, from 1: a `FieldStream` whose `stamp` is not a batch's has no index in it yet.
let batches = 0

/**
 * The field writes of a body, in body order: write `i` is to stream `names[streamOf[i]]`, of field `fieldKeys[i]`,
 * ... Parallel arrays rather than an object per write, so that a 100,000-field body costs a few arrays.
 */
export class LineBatch implements LineSink<SeriesName, FieldStream> {
  /**
   * The distinct streams of the writes (docs/api.md, section 13.1, "Stream of a field":
   * `cpu.usage_idle{cpu=cpu0,host=web1}`), in order of first appearance.
   */
  readonly names: Array<string> = []
  /** The stream of each write, an index into {@link names}. */
  readonly streamOf: Array<number> = []
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

  // This batch's number (see `FieldStream.stamp`), and the index of each of its stream names.
  private readonly stamp = ++batches
  private readonly indexOf = new Map<string, number>()

  constructor(
    private readonly body: string,
    private readonly codes: BodyCodes
  ) {}

  /** The number of field writes. */
  get size(): number {
    return this.streamOf.length
  }

  /** The stream of each write, in write order (made when asked: `names[streamOf[i]]`). */
  get streams(): ReadonlyArray<string> {
    return this.streamOf.map((k) => this.names[k]!)
  }

  /** The stream of write `i`. */
  stream(i: number): string {
    return this.names[this.streamOf[i]!]!
  }

  /** The timestamp of write `i` in microseconds, `undefined` when its line has none (the server assigns `ts`). */
  timestamp(i: number): Micros | undefined {
    const ts = this.timestamps[i]!
    return ts === NO_TIMESTAMP ? undefined : (ts as Micros)
  }

  /**
   * Write `i`'s value as text (docs/api.md, section 13.1, "As text"): a string as written with its escapes removed, an
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
   * serialising a number. The others (a string, a boolean, any other number text) have none: the caller
   * serialises the value.
   *
   * The texts stand one after another in `writes`' order, in one text written from the body's code units; write `i`'s
   * is `text.slice(start[i], end[i])` (`end[i]` stays 0 for a write without one). A store copying entries into its
   * blocks then reads one run of memory rather than a string per entry somewhere on the heap (that copy
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

  /** @internal The sink's series: its stream names (see `SeriesName`); a duplicate tag refuses the line. */
  series(measurement: string, tagKeys: ReadonlyArray<string>, tagValues: ReadonlyArray<string>): SeriesName {
    const suffix = tagsText(tagKeys, tagValues)
    if (suffix instanceof DuplicateTag) throw new LineProblem(suffix.problem)
    return new SeriesName(measurement + ".", suffix)
  }

  /** @internal The sink's field: its stream. */
  field(series: SeriesName, key: string): FieldStream {
    return new FieldStream(series.stream(key))
  }

  /** @internal */
  value(
    stream: FieldStream,
    fieldKey: string,
    kind: FieldKind,
    n: number,
    start: number,
    end: number,
    line: number,
    plain: boolean
  ): void {
    if (stream.stamp !== this.stamp) {
      // Two series texts may name one stream (tags in another order, a series met again after being displaced).
      let index = this.indexOf.get(stream.name)
      if (index === undefined) {
        index = this.names.length
        this.names.push(stream.name)
        this.indexOf.set(stream.name, index)
      }
      stream.stamp = this.stamp
      stream.index = index
    }
    this.streamOf.push(stream.index)
    this.fieldKeys.push(fieldKey)
    this.kinds.push(kind)
    this.numbers.push(n)
    this.timestamps.push(NO_TIMESTAMP)
    this.lines.push(line)
    this.starts.push(start)
    this.ends.push(end)
    this.plain.push(plain)
  }

  /** @internal */
  lineTimestamp(first: number, micros: number): void {
    const timestamps = this.timestamps
    for (let k = first; k < timestamps.length; k++) timestamps[k] = micros
  }
}

// `{"number":` and `}` around a number's text: its point's JSON.
const numberJsonHead = Buffer.from('{"number":', "latin1")
const numberJsonOverhead = numberJsonHead.length + 1
const CLOSE_BRACE = 0x7d

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

/** Options of {@link parseLineProtocol}. */
export interface LineProtocolOptions extends LexerOptions {
  /**
   * The body's bytes, when the body is their UTF-8 decoding (a request body as received): an ASCII body, which is
   * what agents send, is then scanned over them, a byte a character, rather than through the string (see
   * `BodyCodes`). Without them the parser encodes the body itself.
   */
  readonly bytes?: Uint8Array | undefined
}

/**
 * Parses a line protocol body (docs/api.md, section 13.1) into its field writes, in body order. Fails with
 * `InvalidRequest` (400) at the first line that does not parse, or whose timestamp is before 1970 or after
 * 2106-02-07T06:28:15Z: its message starts with the line (`line 3: ...`, counting every line of the body
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

/**
 * The series and field streams met so far, kept from body to body (see `LineSymbols`: 4,096 series at most, about
 * 8 MiB): a `LineBatch`'s handles are its stream names, which depend only on the series' and keys' text, and a
 * `FieldStream`'s index is given anew by each batch. So an agent's series are parsed and named once per process.
 */
const symbols = new LineSymbols<SeriesName, FieldStream>(4096)

const parse = (
  body: string,
  options: LineProtocolOptions,
  shortcuts: boolean
): Either.Either<LineBatch, InvalidRequest | PayloadTooLarge> => {
  const codes = bodyCodes(body, options.bytes)
  const batch = new LineBatch(body, codes)
  return Either.map(lexLineProtocol(body, codes, options, batch, shortcuts, symbols), () => batch)
}
