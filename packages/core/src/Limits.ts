/**
 * Request limits (docs/api.md section 5, "Default limits"). Exceeding one is 413 `payload_too_large`.
 * `maxBodyBytes` in bytes.
 */
export interface Limits {
  readonly maxBodyBytes: number
  readonly maxStreams: number
  readonly maxArrayElements: number
}

/** The contract's defaults: 1 MiB body, 256 streams per multi-stream push, 10,000 array elements per point. */
export const defaultLimits: Limits = {
  maxBodyBytes: 1024 * 1024,
  maxStreams: 256,
  maxArrayElements: 10_000
}
