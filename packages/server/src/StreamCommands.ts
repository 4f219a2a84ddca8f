import {
  type AccountStore,
  formatTs,
  isoTime,
  type RenderedPage,
  type StorageFailure,
  type StreamStore,
  UseCases
} from "@dashstream/core"
import { Console, Effect, Either, Stream } from "effect"
import * as Config from "./Config.js"
import { CommandFailed, UsageError } from "./Errors.js"

/**
 * The `streams read` command (README, "Command line"; the read and range read of docs/api.md): a stream's entries
 * through the core read use case, the database opened by the CLI, no HTTP. Exit codes as the README says: a bad flag
 * value is a usage error (2); an unknown access key or stream, or a failing store, a runtime failure (1).
 */

/** The flags of `streams read` as given (`--from`, `--to`, `--since`, `--points`, `--limit`; all optional). */
export interface ReadFlags {
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly since?: string | undefined
  readonly points?: string | undefined
  readonly limit?: string | undefined
}

// UNIX seconds as the read takes them; anything else that is not an ISO 8601 time is left to the read to refuse.
const secondsText = /^\d*\.?\d*$/

/**
 * A time flag's value as the read's decimal UNIX seconds: UNIX seconds are passed on as given; an ISO 8601 time with
 * a zone (`2024-01-10T03:00:00Z`, `2024-01-10T04:00:00.5+01:00`) or a date alone (midnight UTC) is converted, exact to
 * the microsecond. Fails with a {@link UsageError} naming the flag for anything else.
 */
const timeOf = (flag: string, value: string): Either.Either<string, UsageError> =>
  secondsText.test(value)
    ? Either.right(value)
    : Either.mapBoth(Config.parseNow(value), {
        onLeft: () =>
          new UsageError({
            message:
              `--${flag} must be UNIX seconds (1700000000 or 1700000000.25) or an ISO 8601 time with a zone ` +
              `(2024-01-10T03:00:00Z), got ${JSON.stringify(value)}`
          }),
        onRight: formatTs
      })

/**
 * The read's parameters of the flags: the time flags through {@link timeOf}; with none of `--from`, `--to`,
 * `--since` and `--points`, every entry (`from=0`) rather than the HTTP read's latest entry. Runs before the database
 * is opened.
 */
export const parseReadFlags = (flags: ReadFlags): Either.Either<UseCases.ReadParams, UsageError> =>
  Either.gen(function* () {
    const time = (flag: "from" | "to" | "since") => {
      const value = flags[flag]
      return value === undefined ? Either.right(undefined) : timeOf(flag, value)
    }
    const from = yield* time("from")
    const to = yield* time("to")
    const since = yield* time("since")
    const unbounded = from === undefined && to === undefined && since === undefined && flags.points === undefined
    return { from: unbounded ? "0" : from, to, since, points: flags.points, limit: flags.limit }
  })

/**
 * `streams read`: reads `stream` of the account of `accessKey` with `params` (a range read, or with `--since` alone
 * the export read) a page at a time, printing each page as it comes, so a long stream is never held whole. Human
 * output: one line per entry, its ISO 8601 time (to the millisecond) and its point as JSON; none for an empty window.
 * `json`: the HTTP read's `{"data": [...]}` with exact `ts`, one line per page after the first when there are several.
 * A parameter the read refuses is a {@link UsageError} naming its flag; an unknown key or stream a
 * {@link CommandFailed}.
 */
export const read = (
  accessKey: string,
  stream: string,
  params: UseCases.ReadParams,
  json: boolean
): Effect.Effect<void, UsageError | CommandFailed | StorageFailure, AccountStore | StreamStore> =>
  Effect.gen(function* () {
    const { first, rest } = yield* UseCases.readPages(accessKey, stream, params).pipe(
      Effect.catchTags({
        Forbidden: () => new CommandFailed({ message: "the access key is unknown or has been revoked" }),
        StreamNotFound: (error) => new CommandFailed({ message: error.message }),
        InvalidSince: (error) => new UsageError({ message: `--since: ${error.message}` }),
        InvalidRequest: (error) =>
          new UsageError({ message: error.path === undefined ? error.message : `--${error.path}: ${error.message}` })
      })
    )
    if (json) {
      if (rest === undefined) return yield* Console.log(`{"data":[${first.text}]}`)
      yield* Console.log(`{"data":[${first.text}`)
      yield* Stream.runForEach(rest, (page) => Console.log(`,${page.text}`))
      return yield* Console.log("]}")
    }
    yield* printEntries(first)
    if (rest !== undefined) yield* Stream.runForEach(rest, printEntries)
  })

const printEntries = (page: RenderedPage) =>
  page.count === 0
    ? Effect.void
    : Effect.forEach(
        JSON.parse(`[${page.text}]`) as Array<{ readonly ts: number; readonly point: unknown }>,
        (entry) => Console.log(`${isoTime(Math.round(entry.ts * 1_000_000))} ${JSON.stringify(entry.point)}`),
        { discard: true }
      )
