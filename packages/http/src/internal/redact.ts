import { Effect, type Scope } from "effect"

/**
 * Access keys, view tokens, the admin token and console sessions must never reach a log (docs/api.md sections 6, 11
 * and 14). Keys and view tokens travel in the read path (`/api/v2/<KEY>/datastream/...`), the dashboard and rotation
 * paths (`/d/<viewToken>`, `/r/<viewToken>`) and in push bodies; the admin token and session tokens travel in headers
 * and cookies. A client may put any of them in any other path by mistake (`/console/<token>`, `/admin/<token>`);
 * these helpers keep them out of log lines.
 */

/** What replaces a secret in a log line. */
export const redacted = "<redacted>"

const decodeSegment = (segment: string): string => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** A segment compared as a router might see it: percent-decoded, case folded. */
const normal = (segment: string): string => decodeSegment(segment).toLowerCase()

/**
 * Access keys and view tokens as `newAccessKey` and `newViewToken` make them (`ds_` or `dv_` and 43 base64url
 * characters; 16 are enough to tell), recognised anywhere in a segment (`/assets/dv_...`, `/x/token=ds_...`) but not
 * inside a word (a stream name such as `leads_per_region_this_week` is not a key).
 */
const secretShape = /(?:^|[^A-Za-z0-9])d[sv]_[A-Za-z0-9_-]{16,}/

/**
 * Console session tokens as core's `ConsoleSession.issueSession` makes them (`<id>.<expires>.<signature>`: 22
 * base64url characters, UNIX seconds, 43 base64url characters), recognised by their id and expiry (a token cut
 * short still names its session) anywhere in a segment, but not inside a longer word.
 */
const sessionShape = /(?:^|[^A-Za-z0-9_-])[A-Za-z0-9_-]{22}\.\d{9,12}(?!\d)/

/**
 * The secrets of the handlers running in this process that have no shape of their own (the admin token, chosen by
 * the operator), each with the number of handlers that hold it (see {@link holdSecret}).
 */
const heldSecrets = new Map<string, number>()

/**
 * Keeps `secret` (a handler's admin token) out of every path {@link redactPath} shows, in every lane and log line of
 * the process, while the scope is open: a segment that holds it, percent-decoded, is replaced by `<redacted>` like an
 * access key. Nothing for `undefined` or `""`.
 */
export const holdSecret = (secret: string | undefined): Effect.Effect<void, never, Scope.Scope> =>
  secret === undefined || secret === ""
    ? Effect.void
    : Effect.acquireRelease(
        Effect.sync(() => void heldSecrets.set(secret, (heldSecrets.get(secret) ?? 0) + 1)),
        () =>
          Effect.sync(() => {
            const left = (heldSecrets.get(secret) ?? 1) - 1
            if (left === 0) heldSecrets.delete(secret)
            else heldSecrets.set(secret, left)
          })
      )

/** True when `text` (a percent-decoded segment) is shaped like a key, a view token or a session, or holds a held secret. */
const holdsSecret = (text: string): boolean => {
  if (secretShape.test(text) || sessionShape.test(text)) return true
  for (const secret of heldSecrets.keys()) if (text.includes(secret)) return true
  return false
}

/** `scheme://authority` of an absolute-form request target (`GET http://host/path HTTP/1.1`). */
const absolutePrefix = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i

/**
 * The path of a request target (query and fragment dropped; an absolute-form target reduced to its path) split into
 * segments: `["", "api", "v2", KEY, ...]`.
 */
const pathSegments = (url: string): Array<string> => {
  const end = url.search(/[?#]/)
  let path = end === -1 ? url : url.slice(0, end)
  const absolute = absolutePrefix.exec(path)
  if (absolute !== null) path = path.slice(absolute[0].length)
  return path.split("/")
}

/** The index of the first non-empty segment after `from`, or -1. */
const nextSegment = (segments: ReadonlyArray<string>, from: number): number => {
  for (let i = from + 1; i < segments.length; i++) if (segments[i] !== "") return i
  return -1
}

/**
 * The indices of the segments that carry a secret, whatever the path's shape, matched
 * case-insensitively, percent-decoded, across duplicate slashes and anywhere in the path: the segment after
 * `api/v2` (an access key), the segment after `d` or `r` (a dashboard's or rotation's view token, docs/api.md sections 11
 * and 15), every segment after
 * an `api` not followed by `v2` (an unknown export path may still carry a key: `-1` stands for "all the rest"), and
 * any segment that holds something shaped like an access key, a view token or a console session (`/assets/dv_...`,
 * `/dv_...`, `/dashboard/dv_...`, `/console/<session>`) or holds the admin token (see {@link holdSecret}).
 */
const secretSegments = (segments: ReadonlyArray<string>): { readonly at: Set<number>; readonly restFrom: number } => {
  const at = new Set<number>()
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!
    if (holdsSecret(decodeSegment(segment))) at.add(i)
    const name = normal(segment)
    if (name === "api") {
      const version = nextSegment(segments, i)
      if (version === -1) continue
      if (normal(segments[version]!) !== "v2") return { at, restFrom: version }
      const key = nextSegment(segments, version)
      if (key !== -1) at.add(key)
    } else if (name === "d" || name === "r") {
      const token = nextSegment(segments, i)
      if (token !== -1) at.add(token)
    }
  }
  return { at, restFrom: -1 }
}

/**
 * The path part of a request URL (no query string; an absolute-form target is reduced to its path) with every
 * segment that may carry a secret replaced by `<redacted>` (see {@link secretSegments}):
 * `/api/v2/KEY/datastream/s` becomes `/api/v2/<redacted>/datastream/s`, `/d/TOKEN/events` becomes
 * `/d/<redacted>/events`, `/api/v3/KEY/...` becomes `/api/<redacted>`. Used for every URL that is logged or echoed
 * in an error body (docs/api.md section 6).
 */
export const redactPath = (url: string): string => {
  const segments = pathSegments(url)
  const { at, restFrom } = secretSegments(segments)
  const kept = restFrom === -1 ? segments : [...segments.slice(0, restFrom), redacted]
  let out = kept.map((segment, i) => (at.has(i) ? redacted : segment)).join("/")
  // A held secret with a slash in it spans segments: scrubbed from the whole path.
  for (const secret of heldSecrets.keys()) if (secret.includes("/")) out = scrubOne(out, secret)
  return out === "" ? "/" : out
}

/** The access key in an export path (`/api/v2/<KEY>/...`, whatever its shape, see {@link redactPath}), or `undefined`. */
export const accessKeyOfPath = (url: string): string | undefined => {
  const segments = pathSegments(url)
  for (let i = 0; i < segments.length; i++) {
    if (normal(segments[i]!) !== "api") continue
    const version = nextSegment(segments, i)
    if (version === -1 || normal(segments[version]!) !== "v2") return undefined
    const key = nextSegment(segments, version)
    return key === -1 ? undefined : decodeSegment(segments[key]!)
  }
  return undefined
}

/**
 * `text` with every occurrence of `secret` (and its URL-encoded form) replaced; unchanged for an empty secret. Also
 * scrubs the held secrets (see {@link holdSecret}).
 */
export const scrub = (text: string, secret: string | undefined): string => {
  let out = scrubOne(text, secret)
  for (const held of heldSecrets.keys()) if (held !== secret) out = scrubOne(out, held)
  return out
}

const scrubOne = (text: string, secret: string | undefined): string => {
  if (secret === undefined || secret === "") return text
  let out = text.split(secret).join(redacted)
  const encoded = encodeURIComponent(secret)
  if (encoded !== secret) out = out.split(encoded).join(redacted)
  return out
}

/**
 * The request log line: `POST /customSend 200 0.4ms from 192.0.2.7`. `url` is the path under the base path (docs/api.md
 * section 16), `client` the client address of `clientInfo` (the forwarded one behind a trusted proxy).
 */
export const requestLine = (method: string, url: string, status: number, ms: number, client: string): string =>
  `${method} ${redactPath(url)} ${status} ${ms.toFixed(1)}ms from ${client}`
