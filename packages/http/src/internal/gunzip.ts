import { gunzipSync } from "node:zlib"

/** Why a gzip body could not be inflated. */
export type GunzipRefusal = "too large" | "corrupt"

/**
 * Inflates a gzip body (`Content-Encoding: gzip`, one or more members) to at most `maxBytes` bytes, never more
 * (contract section 13.1: a body over the limit after decompression is 413, "without inflating more than the limit").
 * Returns the inflated bytes, `"too large"` or `"corrupt"`.
 *
 * A gzip member ends with its inflated size modulo 2^32 (RFC 1952, ISIZE): the last member's size is at least that,
 * so a body whose trailer names more than `maxBytes` is refused before any inflating. A trailer can lie, so the
 * inflater itself also stops once its output passes `maxBytes` (zlib's `maxOutputLength`, checked after each 16 KiB
 * chunk): a gzip bomb costs at most `maxBytes` of memory and the time to inflate that much.
 */
export const gunzipBounded = (bytes: Buffer, maxBytes: number): Buffer | GunzipRefusal => {
  if (bytes.length >= 18 && bytes.readUInt32LE(bytes.length - 4) > maxBytes) return "too large"
  try {
    return gunzipSync(bytes, { maxOutputLength: maxBytes })
  } catch (error) {
    return (error as { readonly code?: unknown }).code === "ERR_BUFFER_TOO_LARGE" ? "too large" : "corrupt"
  }
}
