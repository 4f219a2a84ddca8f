import type { Either } from "effect"
import type { AccountId } from "./Account.js"
import type { InvalidPoint, InvalidRequest, PayloadTooLarge, UnsupportedCommand } from "./Errors.js"
import type { Limits } from "./Limits.js"
import type { PointOp } from "./Point.js"
import type { WidgetType } from "./WidgetType.js"

/**
 * The protocol-neutral form of a push: what every ingestion protocol's parser produces and what
 * `UseCases.ingest` / `UseCases.ingestDirect` store. The original JSON body (`decodePushRequest`), Smashing's widget
 * pushes and the InfluxDB line protocol are parsers into it; what happens next (the key's account, the widgets, one
 * decoded write per part, one `StreamStore.write` for the whole request) is written once, in core.
 *
 * A parser checks the request's shape (everything it can check without the account) and leaves each part's content
 * undecoded: its meaning depends on the stream's widget type, known only once the account's widgets are looked up.
 * The request carries one {@link PartDecoder} for all its parts, so a part is plain data (no closure per part on the
 * push hot path).
 */

/** Why a part's content is refused: each of these is a 400 (or 413) of docs/api.md section 5, with a `path`. */
export type PartRejection = InvalidPoint | PayloadTooLarge | UnsupportedCommand | InvalidRequest

/**
 * Decodes one part's content against its stream's widget type into the operation to store (docs/api.md section 3),
 * or the refusal. `path` is the part's {@link IngestPart.path}, to prefix the paths of the errors it returns;
 * `limits` bound arrays (`maxArrayElements`). Pure, and called at most once per part (not for skipped parts).
 *
 * Timestamps in a decoded {@link PointOp} are in microseconds (`ts?: Micros`); an entry without one takes the
 * server's receive time (docs/api.md section 3).
 */
export type PartDecoder<V> = (
  type: WidgetType,
  value: V,
  path: string,
  limits: Limits
) => Either.Either<PointOp, PartRejection>

/** One entry of a `Put` operation (see `PointOp`): a point, and its client `ts` in microseconds if it has one. */
export type PutEntry = Extract<PointOp, { readonly _tag: "Put" }>["entries"][number]

/** One write a request asks for: a stream of the key's account and the content to decode against its type. */
export interface IngestPart<V = unknown> {
  /** The stream name as sent (not yet checked: a name that cannot be a stream name is no widget). */
  readonly streamName: string
  /**
   * Where the part's content stands in the request, for error paths: `point`, `streams[3].point` (the original
   * JSON body), `""` (a body that is the content), `line 4` (line protocol). Given to the decoder, and kept on the
   * write so that a refusal at store time (a delta overflow) names the same place.
   */
  readonly path: string
  /** The content, as the protocol's parser left it: what {@link IngestRequest.decode} decodes. */
  readonly value: V
}

/**
 * What to do with a part whose stream is not a widget of the key's account: `"reject"` refuses the whole request
 * with `StreamNotFound` (the original push, Smashing), `"skip"` leaves that part out and counts it (the line
 * protocol, docs/api.md section 13.1: an agent sends far more series than a dashboard shows; `X-Dashstream-Skipped`).
 */
export type UndeclaredStreams = "reject" | "skip"

/**
 * A decoded push, protocol-neutral: the access key, the parts in request order, and how to decode them. Stored all
 * or nothing, in one `StreamStore.write` (docs/api.md section 5); parts to the same stream apply in order.
 *
 * `V` is the protocol's part content (the original JSON: the part's object; Smashing: its body; line protocol: a
 * field value with its timestamp in microseconds).
 */
export interface IngestRequest<V = unknown> {
  /** The access key as sent; `""` when the protocol's credentials were absent (refused as `Forbidden`). */
  readonly accessKey: string
  readonly parts: ReadonlyArray<IngestPart<V>>
  readonly undeclared: UndeclaredStreams
  /**
   * Decodes a part's content (see {@link PartDecoder}). Written with method syntax so that an `IngestRequest<V>`
   * of any protocol is an `IngestRequest<unknown>` to the code that only passes each part's value back to it.
   */
  decode(type: WidgetType, value: V, path: string, limits: Limits): Either.Either<PointOp, PartRejection>
  /**
   * Optional, for a protocol whose every part is one entry (line protocol): the part decoded as the entry of a
   * one-entry `Put`, or the refusal; the same answer as {@link decode} (`Put` of `[entry]`) without the `Either` and
   * the `Put` around it. When present, `UseCases.ingest` uses it instead of `decode` and merges each stream's
   * entries as it goes (see `PutMerger`), storing what `mergePuts` of the one-entry `Put`s would store.
   */
  decodeEntry?(type: WidgetType, value: V, path: string, limits: Limits): PutEntry | PartRejection
  /**
   * Optional, with {@link decodeEntry}: called once when every part has been decoded by it and none refused, before
   * anything is stored. A protocol may complete the entries it returned here, all at once (line protocol: their
   * points' JSON, see `LineBatch.numberJsonText`); an entry left without `json` is stored all the same, its point then
   * serialised by `applyOp`.
   */
  decoded?(): void
  /**
   * Optional, with {@link decodeEntry}, for a protocol of many parts to few streams (line protocol: 1,000 lines to
   * 10 series): the parts as columns (see {@link IngestColumns}). When present, `UseCases.ingest` reads these
   * instead of {@link parts}: each distinct stream is looked up once, and no part object or path string is made on
   * the way to the stored entries. The same request gets the same answer either way.
   */
  readonly columns?: IngestColumns | undefined
  /**
   * The path of the `StreamNotFound` refusing a part (`undeclared: "reject"`), from the part's path: the original
   * JSON body names its `streamName` field (`streams[3].point` gives `streams[3].streamName`). Called only to build
   * that error; without it the error has no path (the stream name came from the URL).
   */
  readonly streamNamePath?: ((partPath: string) => string) | undefined
}

/**
 * The parts of a request as columns (see {@link IngestRequest.columns}): part `i` (0 to `size - 1`, request order) is
 * the one `parts[i]` describes, to stream `names[streamOf[i]]`, at path {@link path}(i), with content decoded by
 * {@link entry}.
 */
export interface IngestColumns {
  /** How many parts there are (`parts.length`). */
  readonly size: number
  /** The distinct stream names of the parts, in order of first appearance (as sent: not yet checked). */
  readonly names: ReadonlyArray<string>
  /** Part `i`'s stream, an index into {@link names}. */
  readonly streamOf: ArrayLike<number>
  /** Part `i`'s path (`line 4`), made when asked (a refusal, or the first part of a stream's write). */
  path(i: number): string
  /**
   * Part `i` decoded as `IngestRequest.decodeEntry` decodes it (the same entry or refusal, whose path is
   * {@link path}(i)).
   */
  entry(type: WidgetType, i: number, limits: Limits): PutEntry | PartRejection
}

/**
 * How a stored request went: `skipped` is how many parts were left out because their stream is not a widget of the
 * account (always 0 with `undeclared: "reject"`).
 */
export interface IngestResult {
  readonly skipped: number
  /**
   * The skipped streams, present when `skipped > 0` (see {@link SkippedStreams}). A function, so that the names are
   * only gathered when someone asks (`serve --log-skipped`).
   */
  readonly skippedStreams?: (() => SkippedStreams) | undefined
}

/**
 * What a stored request skipped, for the log of skipped names (`serve --log-skipped`, docs/api.md section 13.1): the
 * account whose widgets they are not, and the distinct stream names of the skipped parts in order of first
 * appearance.
 */
export interface SkippedStreams {
  readonly accountId: AccountId
  readonly names: ReadonlyArray<string>
}
