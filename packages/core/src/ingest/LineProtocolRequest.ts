import { Either } from "effect"
import { InvalidPoint, type InvalidRequest, type PayloadTooLarge, quoted } from "../Errors.js"
import type { IngestColumns, IngestPart, IngestRequest, PutEntry } from "../Ingest.js"
import type { PointOp, StoredPoint } from "../Point.js"
import type { Micros } from "../Time.js"
import { lineProtocolWidgetTypes, type WidgetType, widgetKind } from "../WidgetType.js"
import {
  FieldKind,
  type LineBatch,
  lineProtocolLimits,
  NO_TIMESTAMP,
  parseLineProtocol,
  type Precision
} from "./LineProtocol.js"

/** The widget types a line protocol field can write to, from the widget-type table (`lineProtocol`). */
export { lineProtocolWidgetTypes }

/**
 * What the number entries of one request read, shared by them (see {@link LineEntry}): the batch's numbers and
 * timestamps, and, once every field is decoded (`LineProtocolRequest.decoded`), their points' JSON as one text and
 * where each write's stands in it (`jsonEnd[i]` 0: none).
 */
class NumberColumns {
  json = ""
  jsonStart: Int32Array | undefined = undefined
  jsonEnd: Int32Array | undefined = undefined

  constructor(
    readonly numbers: ReadonlyArray<number>,
    readonly timestamps: ReadonlyArray<number>
  ) {}
}

/**
 * The entry of field value `i`, a number: one object of two fields while the write waits for its group commit, its
 * point, `ts` and JSON read from the request's columns when the write is applied (a point, two boxed
 * numbers and a string per field made every young-generation GC copy five objects per queued field value).
 */
class LineEntry {
  constructor(
    private readonly of: NumberColumns,
    private readonly i: number
  ) {}

  get point(): StoredPoint {
    return { number: this.of.numbers[this.i]! }
  }

  get ts(): Micros | undefined {
    const ts = this.of.timestamps[this.i]!
    return ts === NO_TIMESTAMP ? undefined : (ts as Micros)
  }

  get json(): string | undefined {
    const of = this.of
    const end = of.jsonEnd === undefined ? 0 : of.jsonEnd[this.i]!
    return end === 0 ? undefined : of.json.slice(of.jsonStart![this.i]!, end)
  }
}

/**
 * A line protocol body as a protocol-neutral request (see `IngestRequest`): one part per field value, in body order,
 * to the stream `<measurement>.<field key>[{tags}]`, at path `line N`; a part's value is its index in the parsed
 * {@link LineBatch}. Undeclared streams are skipped and counted (docs/api.md, section 13.1, "Only declared streams are written").
 * `UseCases.ingest` reads it through its columns (the batch's distinct stream names and each value's index into
 * them, see `IngestColumns`): no object or path string per part; `parts` are made only when asked.
 */
class LineProtocolRequest implements IngestRequest<number>, IngestColumns {
  readonly undeclared = "skip"
  readonly columns: IngestColumns = this
  readonly size: number
  readonly names: ReadonlyArray<string>
  readonly streamOf: ReadonlyArray<number>
  // What the number entries read, and the field values of those whose JSON the body has (`LineBatch.numberJsonText`).
  private numberColumns: NumberColumns
  private readonly numberWrites: Array<number> = []
  private madeParts: Array<IngestPart<number>> | undefined = undefined

  constructor(
    readonly accessKey: string,
    private readonly batch: LineBatch
  ) {
    this.size = batch.size
    this.names = batch.names
    this.streamOf = batch.streamOf
    this.numberColumns = new NumberColumns(batch.numbers, batch.timestamps)
  }

  /** One part per field value (made when first asked; every field of a line shares its line's path). */
  get parts(): ReadonlyArray<IngestPart<number>> {
    if (this.madeParts !== undefined) return this.madeParts
    const { size, batch } = this
    const parts = new Array<IngestPart<number>>(size)
    let line = 0
    let path = ""
    for (let i = 0; i < size; i++) {
      if (batch.lines[i] !== line) {
        line = batch.lines[i]!
        path = `line ${line}`
      }
      parts[i] = { streamName: batch.stream(i), path, value: i }
    }
    return (this.madeParts = parts)
  }

  /** The path of field value `i`: `line N`, the line its line starts on. */
  path(i: number): string {
    return `line ${this.batch.lines[i]!}`
  }

  /** Field value `i` as {@link decodeEntry} decodes it, at {@link path}(i), made only for a refusal. */
  entry(type: WidgetType, i: number): PutEntry | InvalidPoint {
    const kind = widgetKind(type)
    if ((kind === "numeric" || kind === "series") && this.batch.kinds[i] !== FieldKind.String) {
      if (this.batch.plain[i]) this.numberWrites.push(i)
      return new LineEntry(this.numberColumns, i)
    }
    return this.decodeEntry(type, i, this.path(i))
  }

  /**
   * Field value `i` as the entry its stream's widget type stores (docs/api.md, section 13.1, "Value by widget type"):
   *
   * - number, horizontal-bar, vertical-bar, dial, sparkline, line-graph: `{number}` (a boolean is 1 or 0) with the
   *   line's timestamp as its `ts` (none: the server assigns it). A string value is refused.
   * - label: `{label: <value as text>}`; text-feed: `{title: <field key>, msg: <value as text>}`, both at the server's
   *   `ts` (see `LineBatch.text`).
   * - any other widget type is refused.
   *
   * Refusals are `InvalidPoint` at `path` (`line N`), the message naming the line, the stream and its widget type.
   * A number's entry is a {@link LineEntry}, whose point's JSON (`json`) {@link decoded} provides when the body's text
   * is it (see `LineBatch.numberJsonText`). `ingest` merges each stream's entries into one `Put` itself.
   */
  decodeEntry(type: WidgetType, i: number, path: string): PutEntry | InvalidPoint {
    const batch = this.batch
    const kind = widgetKind(type)
    if (kind === "numeric" || kind === "series") {
      if (batch.kinds[i] === FieldKind.String) {
        return new InvalidPoint({
          message:
            `${path}: field ${quoted(batch.fieldKeys[i]!)} is a string, but stream ${quoted(batch.stream(i))} ` +
            `is a ${type} widget, which takes numbers`,
          path
        })
      }
      // The point's JSON as the body wrote it, when it is what serialising the number gives: set by `decoded`.
      if (batch.plain[i]) this.numberWrites.push(i)
      return new LineEntry(this.numberColumns, i)
    }
    if (type === "label") return { point: { label: batch.text(i) } }
    if (type === "text-feed") return { point: { title: batch.fieldKeys[i]!, msg: batch.text(i) } }
    return new InvalidPoint({
      message:
        `${path}: stream ${quoted(batch.stream(i))} is a ${type} widget, which line protocol cannot write ` +
        `(it writes ${lineProtocolWidgetTypes.join(", ")} widgets)`,
      path
    })
  }

  /**
   * Writes the JSON of every number entry {@link decodeEntry} made whose JSON is the body's text, all at once, as one
   * text in body order that the entries slice (see `LineBatch.numberJsonText`). Called by `ingest` once every part is
   * decoded; entries decoded after it (or without it) have no `json`, which `applyOp` then serialises.
   */
  decoded(): void {
    const writes = this.numberWrites
    if (writes.length === 0) return
    const columns = this.numberColumns
    const size = this.batch.size
    columns.jsonStart = new Int32Array(size)
    columns.jsonEnd = new Int32Array(size)
    columns.json = this.batch.numberJsonText(writes, columns.jsonStart, columns.jsonEnd)
    writes.length = 0
    // Entries decoded after this (a request decoded again) read columns of their own, filled by the next call.
    this.numberColumns = new NumberColumns(this.batch.numbers, this.batch.timestamps)
  }

  /** Field value `i` as a one-entry `Put` (see {@link decodeEntry}, which `ingest` uses instead). */
  decode(type: WidgetType, i: number, path: string): Either.Either<PointOp, InvalidPoint> {
    const entry = this.decodeEntry(type, i, path)
    return entry instanceof InvalidPoint ? Either.left(entry) : Either.right({ _tag: "Put", entries: [entry] })
  }
}

/**
 * A line protocol write (docs/api.md, section 13.1) as a protocol-neutral request for `UseCases.ingest`: `body` parsed
 * with timestamps in `precision` units (see {@link parseLineProtocol}; `bytes`, when given, are the bytes `body` was
 * decoded from, which an ASCII body is scanned over), one part per field value (see
 * `LineProtocolRequest`), `accessKey` as the request's credentials gave it (`""` when absent: refused as
 * `Forbidden`). Fails with `InvalidRequest` (400, `line N` in the message and `path`) for a body that does not parse,
 * `PayloadTooLarge` (413) for more than 100,000 field values. The widget-type checks come later, in `ingest`, once
 * the account's widgets are known; then a refused field is `InvalidPoint` and nothing of the request is stored.
 */
export const decodeLineProtocol = (
  body: string,
  accessKey: string,
  precision: Precision,
  bytes?: Uint8Array
): Either.Either<IngestRequest<number>, InvalidRequest | PayloadTooLarge> =>
  Either.map(
    parseLineProtocol(body, { precision, maxFieldValues: lineProtocolLimits.maxFieldValues, bytes }),
    (batch) => new LineProtocolRequest(accessKey, batch)
  )
