/**
 * Access keys and view tokens must never reach a log (contract sections 6 and 11). They travel in the read path
 * (`/api/v2/<KEY>/datastream/...`), the dashboard and rotation paths (`/d/<viewToken>`, `/r/<viewToken>`) and in push
 * bodies, and a client may put
 * them in any other path by mistake; these helpers keep them out of log lines.
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
 * The indices of the segments that carry a secret, whatever the path's shape (issue 13, defect 2), matched
 * case-insensitively, percent-decoded, across duplicate slashes and anywhere in the path: the segment after
 * `api/v2` (an access key), the segment after `d` or `r` (a dashboard's or rotation's view token, contract sections 11
 * and 15), every segment after
 * an `api` not followed by `v2` (an unknown export path may still carry a key: `-1` stands for "all the rest"), and
 * any segment that holds something shaped like an access key or a view token (issue 22 item 8: `/assets/dv_...`,
 * `/dv_...`, `/dashboard/dv_...` reached the request log).
 */
const secretSegments = (segments: ReadonlyArray<string>): { readonly at: Set<number>; readonly restFrom: number } => {
  const at = new Set<number>()
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!
    if (secretShape.test(decodeSegment(segment))) at.add(i)
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
 * in an error body (contract section 6).
 */
export const redactPath = (url: string): string => {
  const segments = pathSegments(url)
  const { at, restFrom } = secretSegments(segments)
  const kept = restFrom === -1 ? segments : [...segments.slice(0, restFrom), redacted]
  const out = kept.map((segment, i) => (at.has(i) ? redacted : segment)).join("/")
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

/** `text` with every occurrence of `secret` (and its URL-encoded form) replaced; unchanged for an empty secret. */
export const scrub = (text: string, secret: string | undefined): string => {
  if (secret === undefined || secret === "") return text
  let out = text.split(secret).join(redacted)
  const encoded = encodeURIComponent(secret)
  if (encoded !== secret) out = out.split(encoded).join(redacted)
  return out
}

/**
 * The request log line: `POST /customSend 200 0.4ms from 192.0.2.7`. `url` is the path under the base path (contract
 * section 16), `client` the client address of `clientInfo` (the forwarded one behind a trusted proxy).
 */
export const requestLine = (method: string, url: string, status: number, ms: number, client: string): string =>
  `${method} ${redactPath(url)} ${status} ${ms.toFixed(1)}ms from ${client}`
