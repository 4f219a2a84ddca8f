import { Either } from "effect"
import { InvalidPoint, quoted } from "../Errors.js"
import type { StoredPoint } from "../Point.js"
import { isStreamName } from "../StreamName.js"
import type { StreamWrite } from "../StreamStore.js"
import type { Micros } from "../Time.js"
import type { Widget } from "../Widget.js"
import { type WidgetType, widgetKind } from "../WidgetType.js"
import { FieldKind, type LineBatch } from "./LineProtocol.js"

/** What a parsed line protocol body asks of the storage, once the account's widgets are known. */
export interface LineProtocolWrites {
  /**
   * One write per declared stream, in order of its first field in the body: a `Put` of one entry per field value of
   * that stream, in body order (so a later line with the same timestamp replaces an earlier one, as section 3 says).
   */
  readonly writes: Array<StreamWrite>
  /** How many field values went to streams that are not widgets of the account (skipped, not an error). */
  readonly skipped: number
}

/**
 * The distinct stream names of a batch that can be stream names at all (section 2), in order of first appearance:
 * the names whose widgets a caller looks up before {@link lineProtocolWrites}. A name that cannot be a stream name
 * (over 255 characters, a control character, a `/`) is no widget on any backend and is not looked up.
 */
export const lineProtocolStreamNames = (batch: LineBatch): Array<string> => {
  const seen = new Set<string>()
  const names: Array<string> = []
  for (const name of batch.streams) {
    if (seen.has(name)) continue
    seen.add(name)
    if (isStreamName(name)) names.push(name)
  }
  return names
}

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

interface Group {
  readonly widget: Widget
  readonly line: number
  readonly entries: Array<{ readonly point: StoredPoint; readonly ts?: Micros }>
}

/**
 * The writes of a parsed body (contract section 13.1), pure: each field value whose stream `widgetOf` knows becomes
 * one entry of that stream, by its widget type:
 *
 * - number, horizontal-bar, vertical-bar, dial, sparkline, line-graph: `{number}` (a boolean is 1 or 0) with the
 *   line's timestamp as its `ts` (none: the server assigns it). A string value is refused.
 * - label: `{label: <value as text>}`; text-feed: `{title: <field key>, msg: <value as text>}`, both at the server's
 *   `ts` (see `LineBatch.text`).
 * - any other widget type is refused.
 *
 * A field value whose stream `widgetOf` does not know is counted in `skipped`. Fails with `InvalidPoint` (400) at the
 * first refused field value, the message naming its line, stream and widget type; then nothing of the body may be
 * stored (all or nothing).
 */
export const lineProtocolWrites = (
  batch: LineBatch,
  widgetOf: (streamName: string) => Widget | undefined
): Either.Either<LineProtocolWrites, InvalidPoint> => {
  // `null`: a stream the account does not have, looked up once per body.
  const groups = new Map<string, Group | null>()
  const { streams, kinds, numbers, lines } = batch
  let skipped = 0
  for (let i = 0; i < streams.length; i++) {
    const name = streams[i]!
    let group = groups.get(name)
    if (group === undefined) {
      const widget = isStreamName(name) ? widgetOf(name) : undefined
      group = widget === undefined ? null : { widget, line: lines[i]!, entries: [] }
      groups.set(name, group)
    }
    if (group === null) {
      skipped++
      continue
    }
    const type = group.widget.type
    const kind = widgetKind(type)
    if (kind === "numeric" || kind === "series") {
      if (kinds[i] === FieldKind.String) {
        return Either.left(
          new InvalidPoint({
            message:
              `line ${lines[i]}: field ${quoted(batch.fieldKeys[i]!)} is a string, but stream ${quoted(name)} is a ` +
              `${type} widget, which takes numbers`
          })
        )
      }
      const ts = batch.timestamp(i)
      group.entries.push(ts === undefined ? { point: { number: numbers[i]! } } : { point: { number: numbers[i]! }, ts })
    } else if (type === "label") {
      group.entries.push({ point: { label: batch.text(i) } })
    } else if (type === "text-feed") {
      group.entries.push({ point: { title: batch.fieldKeys[i]!, msg: batch.text(i) } })
    } else {
      return Either.left(
        new InvalidPoint({
          message:
            `line ${lines[i]}: stream ${quoted(name)} is a ${type} widget, which line protocol cannot write ` +
            `(it writes ${lineProtocolWidgetTypes.join(", ")} widgets)`
        })
      )
    }
  }
  const writes: Array<StreamWrite> = []
  for (const group of groups.values()) {
    if (group === null) continue
    writes.push({ widget: group.widget, op: { _tag: "Put", entries: group.entries }, path: `line ${group.line}` })
  }
  return Either.right({ writes, skipped })
}
