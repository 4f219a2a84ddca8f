import { Either, ParseResult } from "effect"
import { InvalidRequest } from "../Errors.js"

/** A decode issue's path as the admin API reports it: `receiverIds[2]`, `condition.above`. */
export const issuePath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const key of path) out += typeof key === "number" ? `[${key}]` : out === "" ? String(key) : `.${String(key)}`
  return out
}

/**
 * The first issue of a failed decode as `InvalidRequest` (400 `invalid_request`): its message and its path
 * (prefixed by `prefix`, e.g. `condition`), or `fallback` when the issue has no message.
 */
export const firstIssue = <A>(
  decoded: Either.Either<A, ParseResult.ParseError>,
  fallback: string,
  prefix: ReadonlyArray<PropertyKey> = []
): Either.Either<A, InvalidRequest> =>
  Either.mapLeft(decoded, (error) => {
    const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
    const path = issuePath([...prefix, ...(issue?.path ?? [])])
    return new InvalidRequest({ message: issue?.message ?? fallback, ...(path === "" ? {} : { path }) })
  })
