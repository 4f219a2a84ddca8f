import { Either } from "effect"
import { InvalidPoint, type InvalidRequest, type PayloadTooLarge, quoted } from "../Errors.js"
import type { IngestPart, IngestRequest, PutEntry } from "../Ingest.js"
import type { PointOp, StoredPoint } from "../Point.js"
import type { Micros } from "../Time.js"
import { type WidgetType, widgetKind } from "../WidgetType.js"
import { FieldKind, type LineBatch, lineProtocolLimits, parseLineProtocol, type Precision } from "./LineProtocol.js"

/** The widget types a line protocol field can write to (contract section 13.1, "Value by widget type"). */
export const lineProtocolWidgetTypes: ReadonlyArray<WidgetType> = [
  "number",
  "horizontal-bar",
  "vertical-bar",
  "dial",
  "sparkline",
  "line-graph",
  "label",
  "text-feed"
]

/**
 * The entry of one field value (see `LineProtocolRequest.decodeEntry`): one class, so every such entry has one shape,
 * and `json` set once every field is decoded (`decoded`).
 */
class LineEntry {
  constructor(
    readonly point: StoredPoint,
    readonly ts: Micros | undefined,
    public json: string | undefined
  ) {}
}

/**
 * A line protocol body as a protocol-neutral request (see `IngestRequest`): one part per field value, in body order,
 * to the stream `<measurement>.<field key>[{tags}]`, at path `line N`; a part's value is its index in the parsed
 * {@link LineBatch}. Undeclared streams are skipped and counted (contract 13.1, "Only declared streams are written").
 */
class LineProtocolRequest implements IngestRequest<number> {
  readonly undeclared = "skip"
  readonly parts: Array<IngestPart<number>>
  // The number entries `decodeEntry` made whose JSON the body has (`LineBatch.numberJsons`), and their field values.
  private readonly numberEntries: Array<LineEntry> = []
  private readonly numberWrites: Array<number> = []

  constructor(
    readonly accessKey: string,
    private readonly batch: LineBatch
  ) {
    const size = batch.size
    const parts = new Array<IngestPart<number>>(size)
    const { streams, lines } = batch
    // Every field of a line shares its line's path.
    let line = 0
    let path = ""
    for (let i = 0; i < size; i++) {
      if (lines[i] !== line) {
        line = lines[i]!
        path = `line ${line}`
      }
      parts[i] = { streamName: streams[i]!, path, value: i }
    }
    this.parts = parts
  }

  /**
   * Field value `i` as the entry its stream's widget type stores (contract 13.1, "Value by widget type"):
   *
   * - number, horizontal-bar, vertical-bar, dial, sparkline, line-graph: `{number}` (a boolean is 1 or 0) with the
   *   line's timestamp as its `ts` (none: the server assigns it). A string value is refused.
   * - label: `{label: <value as text>}`; text-feed: `{title: <field key>, msg: <value as text>}`, both at the server's
   *   `ts` (see `LineBatch.text`).
   * - any other widget type is refused.
   *
   * Refusals are `InvalidPoint` at `path` (`line N`), the message naming the line, the stream and its widget type.
   * A number's entry gets its point's JSON (`json`) from {@link decoded} when the body's text is it (see
   * `LineBatch.numberJsons`). Two objects per field (the entry and its point): `ingest` merges each stream's entries
   * into one `Put` itself.
   */
  decodeEntry(type: WidgetType, i: number, path: string): PutEntry | InvalidPoint {
    const batch = this.batch
    const kind = widgetKind(type)
    if (kind === "numeric" || kind === "series") {
      if (batch.kinds[i] === FieldKind.String) {
        return new InvalidPoint({
          message:
            `${path}: field ${quoted(batch.fieldKeys[i]!)} is a string, but stream ${quoted(batch.streams[i]!)} ` +
            `is a ${type} widget, which takes numbers`,
          path
        })
      }
      const entry = new LineEntry({ number: batch.numbers[i]! }, batch.timestamp(i), undefined)
      // The point's JSON as the body wrote it, when it is what serialising the number gives: set by `decoded`.
      if (batch.plain[i]) {
        this.numberEntries.push(entry)
        this.numberWrites.push(i)
      }
      return entry
    }
    if (type === "label") return new LineEntry({ label: batch.text(i) }, undefined, undefined)
    if (type === "text-feed")
      return new LineEntry({ title: batch.fieldKeys[i]!, msg: batch.text(i) }, undefined, undefined)
    return new InvalidPoint({
      message:
        `${path}: stream ${quoted(batch.streams[i]!)} is a ${type} widget, which line protocol cannot write ` +
        `(it writes ${lineProtocolWidgetTypes.join(", ")} widgets)`,
      path
    })
  }

  /**
   * Sets the JSON of every number entry {@link decodeEntry} made whose JSON is the body's text, all at once: slices of
   * one text, in body order (see `LineBatch.numberJsons`). Called by `ingest` once every part is decoded.
   */
  decoded(): void {
    const entries = this.numberEntries
    if (entries.length === 0) return
    const jsons = this.batch.numberJsons(this.numberWrites)
    for (let k = 0; k < entries.length; k++) entries[k]!.json = jsons[k]
    entries.length = 0
    this.numberWrites.length = 0
  }

  /** Field value `i` as a one-entry `Put` (see {@link decodeEntry}, which `ingest` uses instead). */
  decode(type: WidgetType, i: number, path: string): Either.Either<PointOp, InvalidPoint> {
    const entry = this.decodeEntry(type, i, path)
    return entry instanceof InvalidPoint ? Either.left(entry) : Either.right({ _tag: "Put", entries: [entry] })
  }
}

/**
 * A line protocol write (contract section 13.1) as a protocol-neutral request for `UseCases.ingest`: `body` parsed
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
