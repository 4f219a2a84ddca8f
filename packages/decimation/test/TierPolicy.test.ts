import { Either } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decimationHorizon, defaultPolicy, formatPolicy, makePolicy, parsePolicy } from "../src/index.js"
import { DAY, HOUR, MINUTE, tinyPolicyArb } from "./support.js"

const errorOf = <A, E extends { readonly message: string }>(either: Either.Either<A, E>): string =>
  Either.match(either, { onLeft: (error) => error.message, onRight: () => "no error" })

describe("TierPolicy", () => {
  it("defaults to the contract's tiers: 5 min after 48 h, 1 h after 14 days, 1 day after 90 days", () => {
    expect([...defaultPolicy]).toEqual([
      { bucketWidth: 300_000_000, minAge: 172_800_000_000 },
      { bucketWidth: 3_600_000_000, minAge: 1_209_600_000_000 },
      { bucketWidth: 86_400_000_000, minAge: 7_776_000_000_000 }
    ])
    expect(formatPolicy(defaultPolicy)).toBe("5m:2d,1h:14d,1d:90d")
    expect(Object.isFrozen(defaultPolicy)).toBe(true)
  })

  it("parses the compact form, with whitespace and every unit", () => {
    expect(Either.getOrThrow(parsePolicy("5m:48h,1h:14d,1d:90d"))).toEqual(defaultPolicy)
    expect(Either.getOrThrow(parsePolicy(" 5m : 2d , 60m:2w "))).toEqual([
      { bucketWidth: 5 * MINUTE, minAge: 2 * DAY },
      { bucketWidth: HOUR, minAge: 14 * DAY }
    ])
    expect(Either.getOrThrow(parsePolicy("10us:0s,1ms:1s"))).toEqual([
      { bucketWidth: 10, minAge: 0 },
      { bucketWidth: 1000, minAge: 1_000_000 }
    ])
  })

  it("rejects widths that do not nest and ages that do not ascend, naming the tier", () => {
    expect(errorOf(makePolicy([]))).toBe("a tier policy needs at least one tier")
    expect(errorOf(parsePolicy("5m:48h,7m:14d"))).toBe(
      `invalid tier policy "5m:48h,7m:14d": tier 2: bucket width 7m must be a larger multiple of tier 1's 5m ` +
        "so that buckets nest"
    )
    expect(errorOf(parsePolicy("1h:48h,5m:14d"))).toContain("tier 2: bucket width 5m must be a larger multiple")
    expect(errorOf(parsePolicy("1h:48h,1h:14d"))).toContain("tier 2: bucket width 1h must be a larger multiple")
    expect(errorOf(parsePolicy("5m:48h,1h:48h"))).toBe(
      `invalid tier policy "5m:48h,1h:48h": tier 2: minimum age 2d must be greater than tier 1's 2d`
    )
    expect(errorOf(parsePolicy("5m:48h,1h:14d,1d:10d"))).toContain("tier 3: minimum age 10d must be greater")
    expect(errorOf(makePolicy([{ bucketWidth: 0, minAge: 0 }]))).toBe(
      "tier 1: bucket width must be a positive integer number of microseconds, got 0"
    )
    expect(errorOf(makePolicy([{ bucketWidth: 1.5, minAge: 0 }]))).toContain("tier 1: bucket width must be")
    expect(errorOf(makePolicy([{ bucketWidth: 1, minAge: -1 }]))).toBe(
      "tier 1: minimum age must be a non-negative integer number of microseconds, got -1"
    )
  })

  it("rejects malformed text with a readable message", () => {
    expect(errorOf(parsePolicy(""))).toContain("needs at least one tier")
    expect(errorOf(parsePolicy("5m"))).toBe(
      `invalid tier policy "5m": tier 1 "5m" is not of the form <bucket width>:<minimum age>`
    )
    expect(errorOf(parsePolicy("5m:48x"))).toBe(
      `invalid tier policy "5m:48x": tier 1: "48x" is not a duration such as 30s, 5m, 48h or 14d ` +
        "(units us, ms, s, m, h, d, w)"
    )
    expect(errorOf(parsePolicy("5m:48h,"))).toContain(`tier 2 "" is not of the form`)
    expect(errorOf(parsePolicy("1.5m:48h"))).toContain(`"1.5m" is not a duration`)
    expect(errorOf(parsePolicy("-5m:48h"))).toContain(`"-5m" is not a duration`)
    expect(errorOf(parsePolicy("99999999999w:1s"))).toContain(`"99999999999w" is not a duration`)
  })

  it("formats what it parses", () => {
    fc.assert(
      fc.property(tinyPolicyArb, (policy) => {
        expect(Either.getOrThrow(parsePolicy(formatPolicy(policy)))).toEqual(policy)
      })
    )
  })

  it("puts the horizon at the end of the newest qualifying finest bucket", () => {
    const now = Date.UTC(2024, 5, 1, 3, 2, 30) * 1000
    // now - 48 h = 2024-05-30T03:02:30Z, whose 5-minute bucket starts at 03:00.
    expect(decimationHorizon(defaultPolicy, now)).toBe(Date.UTC(2024, 4, 30, 3, 0) * 1000)
    const tiny = Either.getOrThrow(makePolicy([{ bucketWidth: 10, minAge: 5 }]))
    expect(decimationHorizon(tiny, 15)).toBe(10)
    expect(decimationHorizon(tiny, 14)).toBe(0)
    expect(decimationHorizon(tiny, -6)).toBe(-20)
  })
})
