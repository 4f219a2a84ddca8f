import type { IncomingMessage } from "node:http"
import { InvalidRequest, PayloadTooLarge } from "@dashstream/core"
import { Either } from "effect"
import { gunzipBounded } from "./gunzip.js"

/**
 * What the push dialects of other tools read from a request besides the body's own format (docs/api.md section 13):
 * the query, an access key in the `Authorization` header, and a body in a content encoding. Written once, for every
 * dialect's ingest route (`lineProtocolRoutes.ts` is the first).
 */

/** The query of a request target, parsed (empty without one). */
export const queryOf = (url: string | undefined): URLSearchParams => {
  const q = url === undefined ? -1 : url.indexOf("?")
  return new URLSearchParams(q === -1 ? "" : url!.slice(q + 1))
}

/**
 * The credentials of an `Authorization: <scheme> <credentials>` header when its scheme (case-insensitive) is one of
 * `schemes` (lower case: `["token", "bearer"]`), else `undefined`. Surrounding white space is trimmed off.
 */
export const authorizationKey = (header: string | undefined, schemes: ReadonlyArray<string>): string | undefined => {
  if (header === undefined) return undefined
  const space = header.indexOf(" ")
  if (space === -1) return undefined
  const scheme = header.slice(0, space).toLowerCase()
  return schemes.includes(scheme) ? header.slice(space + 1).trim() : undefined
}

/**
 * The password of HTTP Basic credentials (`Authorization: Basic base64(user:password)`, any user): `undefined` without
 * a Basic header, `null` for Basic credentials without a `:` (no password).
 */
export const basicPassword = (header: string | undefined): string | null | undefined => {
  const basic = authorizationKey(header, ["basic"])
  if (basic === undefined) return undefined
  const decoded = Buffer.from(basic, "base64").toString("utf8")
  const colon = decoded.indexOf(":")
  return colon === -1 ? null : decoded.slice(colon + 1)
}

const corrupt = Either.left(new InvalidRequest({ message: "the request body is not valid gzip data" }))

/**
 * The body's bytes as sent before its `Content-Encoding`: inflated when `gzip` (or `x-gzip`), to at most `maxBytes`
 * bytes (more is `PayloadTooLarge`, 413; a body that is not gzip is `InvalidRequest`, 400); as received when the
 * header is absent, empty or `identity`; any other encoding is `InvalidRequest` (400).
 */
export const decodedBody = (
  bytes: Buffer,
  req: IncomingMessage,
  maxBytes: number
): Either.Either<Buffer, InvalidRequest | PayloadTooLarge> => {
  const encoding = req.headers["content-encoding"]?.trim().toLowerCase()
  if (encoding === "gzip" || encoding === "x-gzip") {
    const inflated = gunzipBounded(bytes, maxBytes)
    if (inflated === "corrupt") return corrupt
    if (inflated === "too large") {
      return Either.left(
        new PayloadTooLarge({ message: `the request body is larger than ${maxBytes} bytes after decompression` })
      )
    }
    return Either.right(inflated)
  }
  if (encoding !== undefined && encoding !== "" && encoding !== "identity") {
    return Either.left(
      new InvalidRequest({ message: `Content-Encoding ${JSON.stringify(encoding)} is not supported (only gzip)` })
    )
  }
  return Either.right(bytes)
}
