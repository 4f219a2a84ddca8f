// @ts-check
import { gunzipSync } from "node:zlib"

// A line protocol body's bytes as text (contract section 13.1), shared by the event loop's parse and the line protocol
// thread's (`lineProtocolThread.js`, see `lineProtocolParser.ts`). JavaScript, type-checked from its JSDoc, because
// that thread's module is loaded by node itself (no TypeScript on Node 20) from the sources, from `dist/` and from
// the command's bundle.

/**
 * Why a gzip body could not be inflated.
 * @typedef {"too large" | "corrupt"} GunzipRefusal
 */

/**
 * Inflates a gzip body (`Content-Encoding: gzip`, one or more members) to at most `maxBytes` bytes, never more
 * (contract section 13.1: a body over the limit after decompression is 413, "without inflating more than the limit").
 * Returns the inflated bytes, `"too large"` or `"corrupt"`.
 *
 * A gzip member ends with its inflated size modulo 2^32 (RFC 1952, ISIZE): the last member's size is at least that,
 * so a body whose trailer names more than `maxBytes` is refused before any inflating. A trailer can lie, so the
 * inflater itself also stops once its output passes `maxBytes` (zlib's `maxOutputLength`, checked after each 16 KiB
 * chunk): a gzip bomb costs at most `maxBytes` of memory and the time to inflate that much.
 * @param {Buffer} bytes
 * @param {number} maxBytes
 * @returns {Buffer | GunzipRefusal}
 */
export const gunzipBounded = (bytes, maxBytes) => {
  if (bytes.length >= 18 && bytes.readUInt32LE(bytes.length - 4) > maxBytes) return "too large"
  try {
    return gunzipSync(bytes, { maxOutputLength: maxBytes })
  } catch (error) {
    return /** @type {{ readonly code?: unknown }} */ (error).code === "ERR_BUFFER_TOO_LARGE" ? "too large" : "corrupt"
  }
}

/**
 * Why a body has no text: over `maxBytes` once inflated (413), not gzip (400), or sent in a content encoding other
 * than gzip (400; `encoding` is the header's value, trimmed and lower-cased).
 * @typedef {{ refused: "too large" } | { refused: "corrupt" } | { refused: "encoding", encoding: string }} BodyRefusal
 */

/**
 * The body as text: inflated first when `contentEncoding` (the `Content-Encoding` header, as sent) is `gzip` or
 * `x-gzip` (bounded: `maxBytes`), decoded as UTF-8, a byte order mark skipped; no header, `""` and `identity` are the
 * bytes as they are. Any other encoding is refused.
 * @param {Buffer} bytes
 * @param {string | undefined} contentEncoding
 * @param {number} maxBytes
 * @returns {string | BodyRefusal}
 */
export const lineProtocolBodyText = (bytes, contentEncoding, maxBytes) => {
  const encoding = contentEncoding?.trim().toLowerCase()
  let text = bytes
  if (encoding === "gzip" || encoding === "x-gzip") {
    const inflated = gunzipBounded(bytes, maxBytes)
    if (inflated === "too large" || inflated === "corrupt") return { refused: inflated }
    text = inflated
  } else if (encoding !== undefined && encoding !== "" && encoding !== "identity") {
    return { refused: "encoding", encoding }
  }
  const decoded = text.toString("utf8")
  return decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded
}
