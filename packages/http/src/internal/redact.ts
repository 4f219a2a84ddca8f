/**
 * Access keys must never reach a log (contract section 6). They travel in the read path
 * (`/api/v2/<KEY>/datastream/...`) and in push bodies; these helpers keep them out of log lines.
 */

/** What replaces a secret in a log line. */
export const redacted = "<redacted>"

/**
 * The path part of a request URL (no query string), with the access key segment of export paths replaced:
 * `/api/v2/KEY/datastream/s` becomes `/api/v2/<redacted>/datastream/s`. Any other path under `/api/` keeps only its
 * first segment, since an unknown export path may still carry a key.
 */
export const redactPath = (url: string): string => {
  const q = url.indexOf("?")
  const path = q === -1 ? url : url.slice(0, q)
  if (!path.startsWith("/api/")) return path
  const segments = path.split("/")
  // ["", "api", "v2", KEY, "datastream", STREAM, ...]
  if (segments[2] === "v2" && segments.length >= 4) {
    segments[3] = redacted
    return segments.join("/")
  }
  return `/api/${redacted}`
}

/** The access key in an export path, or `undefined`. */
export const accessKeyOfPath = (url: string): string | undefined => {
  if (!url.startsWith("/api/v2/")) return undefined
  const end = url.indexOf("/", 8)
  const raw = url.slice(8, end === -1 ? url.length : end)
  if (raw === "") return undefined
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}

/** `text` with every occurrence of `secret` (and its URL-encoded form) replaced; unchanged for an empty secret. */
export const scrub = (text: string, secret: string | undefined): string => {
  if (secret === undefined || secret === "") return text
  let out = text.split(secret).join(redacted)
  const encoded = encodeURIComponent(secret)
  if (encoded !== secret) out = out.split(encoded).join(redacted)
  return out
}

/** The request log line: `POST /customSend 200 0.4ms`. */
export const requestLine = (method: string, url: string, status: number, ms: number): string =>
  `${method} ${redactPath(url)} ${status} ${ms.toFixed(1)}ms`
