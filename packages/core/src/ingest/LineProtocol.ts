import { Either } from "effect"
import { InvalidRequest, quoted } from "../Errors.js"
import type { Precision } from "./LineProtocolTime.js"

/**
 * InfluxDB line protocol (docs/api.md, section 13.1), in parts that know nothing of each other's consumers:
 *
 * - `LineProtocolLexer.ts`: the grammar, one pass over a body into a `LineSink` (`LineProtocolSink.ts`), with
 *   timestamps read in their precision (`LineProtocolTime.ts`);
 * - `LineProtocolBatch.ts`: the sink that makes a body a batch of field writes (`parseLineProtocol`), each to the
 *   stream its series and field key name (`SeriesName.ts`, shared with any dialect of named, tagged series);
 * - `LineProtocolRequest.ts`: the batch as a protocol-neutral ingest request, decoded by widget type;
 * - this module: what a request's parameters mean (its limits and `precision`), and the parts' public names.
 */

export { type BodyCodes, bodyCodes, lexLineProtocol, LineProblem } from "./LineProtocolLexer.js"
export { LineBatch, type LineProtocolOptions, parseLineProtocol, parseLineProtocolInFull } from "./LineProtocolBatch.js"
export { FieldKind, type LexerOptions, type LineSink, NO_TIMESTAMP } from "./LineProtocolSink.js"
export type { Precision } from "./LineProtocolTime.js"

/**
 * The most a line protocol request may carry (docs/api.md, section 13.1): 10 MiB of body after decompression and 100,000
 * field values (skipped ones included); more is 413.
 */
export const lineProtocolLimits = { maxBytes: 10 * 1024 * 1024, maxFieldValues: 100_000 } as const

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
 * The `precision` query parameter of a write (docs/api.md, section 13.1): 1.x `n`, `ns`, `u`, `us`, `ms`, `s`, `m`, `h`;
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
