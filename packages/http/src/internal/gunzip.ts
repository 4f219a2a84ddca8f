import { gunzipSync } from "node:zlib"

/** Why a gzip body could not be inflated. */
export type GunzipRefusal = "too large" | "corrupt"

/**
 * Inflates a gzip body (`Content-Encoding: gzip`, one or more members) to at most `maxBytes` bytes, never more
 * (docs/protocols.md, InfluxDB line protocol: a body over the limit after decompression is 413, and it is never
 * inflated past the limit). Returns the inflated bytes, `"too large"` or `"corrupt"`.
 *
 * zlib decides both: it stops once its output passes `maxBytes` (`maxOutputLength`, checked after each 16 KiB chunk),
 * so a gzip bomb costs at most `maxBytes` of memory and the time to inflate that much, and it refuses what is not
 * gzip, a truncated body and data after the last member other than zero padding (each member's checksum and length
 * checked). The size in a
 * member's trailer (ISIZE) is not trusted before that: in a body that is not gzip those four bytes are anything, and
 * a client that splits a batch on 413 (Telegraf) would retry ever smaller pieces of a corrupt body.
 */
export const gunzipBounded = (bytes: Buffer, maxBytes: number): Buffer | GunzipRefusal => {
  try {
    return gunzipSync(bytes, { maxOutputLength: maxBytes })
  } catch (error) {
    return (error as { readonly code?: unknown }).code === "ERR_BUFFER_TOO_LARGE" ? "too large" : "corrupt"
  }
}
