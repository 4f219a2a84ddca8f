/**
 * Decimation tiers: which bucket width applies to data of which age (docs/api.md section 9).
 *
 * All durations are integer microseconds, like entry timestamps (microseconds since the UNIX epoch).
 */
import { type Brand, Either, Schema } from "effect"
import { MICROS, bucketStart, formatMicros, type Unit } from "./internal/time.js"

/**
 * One tier: buckets of `bucketWidth` microseconds, epoch-aligned, are decimated once their END is at least
 * `minAge` microseconds before the pass time (docs/api.md section 9).
 */
export interface Tier {
  /** Bucket width in microseconds, a positive integer. */
  readonly bucketWidth: number
  /** Minimum age of a bucket's end, in microseconds, a non-negative integer. */
  readonly minAge: number
}

/**
 * A validated tier policy: tiers finest first, each bucket width dividing the next (so buckets nest) and minimum
 * ages strictly ascending. Built only by `makePolicy` / `parsePolicy` (or `defaultPolicy`); frozen.
 */
export type TierPolicy = ReadonlyArray<Tier> & Brand.Brand<"TierPolicy">

/** Why a tier policy was rejected; `message` is one readable sentence naming the offending tier. */
export class InvalidTierPolicy extends Schema.TaggedError<InvalidTierPolicy>()("InvalidTierPolicy", {
  message: Schema.String
}) {}

const invalid = (message: string) => Either.left(new InvalidTierPolicy({ message }))

/**
 * Validates tiers (finest first) into a `TierPolicy`.
 *
 * Fails with `InvalidTierPolicy` when there is no tier, a width is not a positive safe integer, an age is not a
 * non-negative safe integer, widths do not strictly ascend with each one dividing the next (buckets must nest, or
 * composability of passes breaks), or ages do not strictly ascend.
 */
export const makePolicy = (tiers: ReadonlyArray<Tier>): Either.Either<TierPolicy, InvalidTierPolicy> => {
  if (tiers.length === 0) return invalid("a tier policy needs at least one tier")
  for (let i = 0; i < tiers.length; i++) {
    const { bucketWidth, minAge } = tiers[i]!
    const n = i + 1
    if (!Number.isSafeInteger(bucketWidth) || bucketWidth <= 0) {
      return invalid(`tier ${n}: bucket width must be a positive integer number of microseconds, got ${bucketWidth}`)
    }
    if (!Number.isSafeInteger(minAge) || minAge < 0) {
      return invalid(`tier ${n}: minimum age must be a non-negative integer number of microseconds, got ${minAge}`)
    }
    if (i === 0) continue
    const previous = tiers[i - 1]!
    if (bucketWidth <= previous.bucketWidth || bucketWidth % previous.bucketWidth !== 0) {
      return invalid(
        `tier ${n}: bucket width ${formatMicros(bucketWidth)} must be a larger multiple of tier ${i}'s ` +
          `${formatMicros(previous.bucketWidth)} so that buckets nest`
      )
    }
    if (minAge <= previous.minAge) {
      return invalid(
        `tier ${n}: minimum age ${formatMicros(minAge)} must be greater than tier ${i}'s ` +
          formatMicros(previous.minAge)
      )
    }
  }
  const frozen = Object.freeze(tiers.map(({ bucketWidth, minAge }) => Object.freeze({ bucketWidth, minAge })))
  return Either.right(frozen as unknown as TierPolicy)
}

/**
 * The contract's default tiers (section 9): 5-minute buckets after 48 hours, 1-hour buckets after 14 days, 1-day
 * buckets after 90 days. In microseconds.
 */
export const defaultPolicy: TierPolicy = Either.getOrThrow(
  makePolicy([
    { bucketWidth: 5 * MICROS.m, minAge: 48 * MICROS.h },
    { bucketWidth: MICROS.h, minAge: 14 * MICROS.d },
    { bucketWidth: MICROS.d, minAge: 90 * MICROS.d }
  ])
)

const DURATION = /^(\d+)(us|ms|s|m|h|d|w)$/

const parseDuration = (text: string): number | undefined => {
  const match = DURATION.exec(text)
  if (match === null) return undefined
  const micros = Number(match[1]) * MICROS[match[2] as Unit]
  return Number.isSafeInteger(micros) ? micros : undefined
}

const notADuration = (index: number, text: string) =>
  `tier ${index + 1}: "${text}" is not a duration such as 30s, 5m, 48h or 14d (units us, ms, s, m, h, d, w)`

/**
 * Parses the compact configuration form `"<width>:<minAge>,..."`, finest tier first, e.g. `"5m:48h,1h:14d,1d:90d"`
 * (the default). A duration is a non-negative integer followed by a unit: `us`, `ms`, `s`, `m`, `h`, `d`, `w`.
 * Whitespace around items is ignored. Fails with `InvalidTierPolicy` (message quotes the input) on bad syntax or on
 * any rule of `makePolicy`.
 */
export const parsePolicy = (text: string): Either.Either<TierPolicy, InvalidTierPolicy> => {
  const fail = (reason: string) => invalid(`invalid tier policy "${text}": ${reason}`)
  if (text.trim() === "") return fail('a tier policy needs at least one tier, e.g. "5m:48h,1h:14d,1d:90d"')
  const items = text.split(",")
  const tiers: Array<Tier> = []
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!.trim()
    const parts = item.split(":")
    if (parts.length !== 2) return fail(`tier ${i + 1} "${item}" is not of the form <bucket width>:<minimum age>`)
    const [widthText, ageText] = parts.map((part) => part.trim()) as [string, string]
    const bucketWidth = parseDuration(widthText)
    if (bucketWidth === undefined) return fail(notADuration(i, widthText))
    const minAge = parseDuration(ageText)
    if (minAge === undefined) return fail(notADuration(i, ageText))
    tiers.push({ bucketWidth, minAge })
  }
  return Either.mapLeft(
    makePolicy(tiers),
    (error) => new InvalidTierPolicy({ message: `invalid tier policy "${text}": ${error.message}` })
  )
}

/** Renders a policy in the compact form read by `parsePolicy`, e.g. `"5m:48h,1h:14d,1d:90d"`. */
export const formatPolicy = (policy: TierPolicy): string =>
  policy.map((tier) => `${formatMicros(tier.bucketWidth)}:${formatMicros(tier.minAge)}`).join(",")

/**
 * Exclusive upper bound, in microseconds, of the timestamps a pass at `now` can delete: every entry with
 * `ts >= decimationHorizon(policy, now)` lies in no qualifying bucket and is kept, and the selection of the entries
 * below it does not depend on the entries above it. Lets storage read only `ts < horizon` (docs/api.md section 9).
 *
 * It is the end of the newest qualifying finest bucket: `floor((now - minAge1) / width1) * width1`; coarser tiers
 * never reach further because their ages are larger and their edges are edges of the finest tier.
 */
export const decimationHorizon = (policy: TierPolicy, now: number): number => {
  const finest = policy[0]!
  return bucketStart(now - finest.minAge, finest.bucketWidth)
}
