import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  formatTs,
  MAX_SECONDS,
  type Micros,
  micros,
  MICROS_PER_SECOND,
  nextServerTs,
  nowMicros,
  secondsToMicros,
  sinceBound,
  sinceFromText
} from "../src/Time.js"

const MAX_MICROS = MAX_SECONDS * MICROS_PER_SECOND

/** Any microsecond in range, biased towards the edges where double precision is tightest. */
const anyMicros: fc.Arbitrary<Micros> = fc
  .oneof(
    { weight: 4, arbitrary: fc.bigInt({ min: 0n, max: BigInt(MAX_MICROS) }).map(Number) },
    { weight: 2, arbitrary: fc.bigInt({ min: 1_600_000_000_000_000n, max: 1_900_000_000_000_000n }).map(Number) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 10_000_000 }).map((n) => MAX_MICROS - n) },
    { weight: 1, arbitrary: fc.integer({ min: -5_000_000, max: 5_000_000 }).map((n) => 2 ** 31 * 1e6 + n) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 10_000_000 }) }
  )
  .map(micros)

describe("secondsToMicros", () => {
  it("converts integer and fractional seconds, rounding to the microsecond", () => {
    assert.strictEqual(secondsToMicros(0), 0)
    assert.strictEqual(secondsToMicros(1732000000), 1_732_000_000_000_000)
    assert.strictEqual(secondsToMicros(1732000000.123456), 1_732_000_000_123_456)
    assert.strictEqual(secondsToMicros(1.0000004), 1_000_000)
    assert.strictEqual(secondsToMicros(MAX_SECONDS), MAX_MICROS)
  })

  it("maps -0 and times below half a microsecond to ts 0, never -0", () => {
    for (const seconds of [-0, 0, 1e-7, 4.9e-7]) {
      assert.isTrue(Object.is(secondsToMicros(seconds), 0), String(seconds))
    }
    assert.strictEqual(secondsToMicros(5e-7), 1)
  })

  it("rejects non-finite, negative and out-of-range (millisecond) values", () => {
    for (const s of [NaN, Infinity, -Infinity, -1, -0.000001, MAX_SECONDS + 1, 1_732_000_000_000]) {
      assert.isUndefined(secondsToMicros(s), String(s))
    }
  })

  it("keeps every in-range microsecond below 2^53 (an exact integer double)", () => {
    assert.isTrue(MAX_MICROS < Number.MAX_SAFE_INTEGER)
    assert.isTrue(Number.isSafeInteger(MAX_MICROS))
  })
})

describe("formatTs", () => {
  it("prints exact UNIX seconds without trailing zeros", () => {
    assert.strictEqual(formatTs(micros(1_732_000_000_123_456)), "1732000000.123456")
    assert.strictEqual(formatTs(micros(1_732_000_000_000_000)), "1732000000")
    assert.strictEqual(formatTs(micros(1_732_000_000_100_000)), "1732000000.1")
    assert.strictEqual(formatTs(micros(1_732_000_000_000_001)), "1732000000.000001")
    assert.strictEqual(formatTs(micros(0)), "0")
    assert.strictEqual(formatTs(micros(5)), "0.000005")
  })

  it("property: the text is a JSON number with at most six decimals", () => {
    fc.assert(
      fc.property(anyMicros, (t) => {
        const text = formatTs(t)
        assert.match(text, /^(0|[1-9]\d*)(\.\d{0,5}[1-9])?$/)
        assert.strictEqual(JSON.parse(text), Number(text))
      }),
      { numRuns: 2000 }
    )
  })

  it("property: round-trips through a client's double: secondsToMicros(Number(formatTs(t))) === t", () => {
    fc.assert(
      fc.property(anyMicros, (t) => {
        assert.strictEqual(secondsToMicros(Number(formatTs(t))), t)
      }),
      { numRuns: 20_000 }
    )
  })
})

describe("sinceFromText", () => {
  it("takes a non-negative decimal number of seconds to its bound, and refuses every other text", () => {
    assert.strictEqual(sinceFromText("0"), -1)
    assert.strictEqual(sinceFromText("1.5"), 1_500_000)
    assert.strictEqual(sinceFromText(".5"), 500_000)
    assert.strictEqual(sinceFromText("1.7e9"), 1_700_000_000_000_000)
    for (const text of ["", " 1", "-1", "+1", "0x10", "0b1", "Infinity", "1e999", "NaN", "1,5"]) {
      assert.isUndefined(sinceFromText(text), text)
    }
  })
})

describe("sinceBound", () => {
  it("is -1 for since=0 (every entry, ts 0 included) and the exact microsecond for a printed ts", () => {
    assert.strictEqual(sinceBound(0), -1)
    assert.strictEqual(sinceBound(-0), -1)
    assert.strictEqual(sinceBound(1732000000.123456), 1_732_000_000_123_456)
    assert.strictEqual(sinceBound(2_147_483_648.000001), 2_147_483_648_000_001)
  })

  it("rounds a since between two microseconds down, so the next entry is not missed", () => {
    assert.strictEqual(sinceBound(1.0000005), 1_000_000)
    assert.strictEqual(sinceBound(10.25000075), 10_250_000)
  })

  it("property: since = a printed ts excludes exactly the entries with ts <= that ts", () => {
    fc.assert(
      fc.property(anyMicros, fc.array(fc.integer({ min: -3, max: 3 })), (t, offsets) => {
        // since=0 is the one printed ts that means "everything" (spec section 4.1 rule 2): tested above.
        if (t === 0) return
        const bound = sinceBound(Number(formatTs(t)))
        assert.strictEqual(bound, t)
        const entries = offsets.map((o) => t + o).filter((ts) => ts >= 0)
        assert.deepStrictEqual(
          entries.filter((ts) => ts > bound),
          entries.filter((ts) => ts > t)
        )
      }),
      { numRuns: 20_000 }
    )
  })
})

describe("nextServerTs", () => {
  it("is now unless the stream already reached it", () => {
    assert.strictEqual(nextServerTs(null, micros(10)), 10)
    assert.strictEqual(nextServerTs(micros(9), micros(10)), 10)
    assert.strictEqual(nextServerTs(micros(10), micros(10)), 11)
    assert.strictEqual(nextServerTs(micros(50), micros(10)), 51)
  })

  it("property: strictly increasing and never before the clock, for any clock sequence (including going back)", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 200 }), (clock) => {
        let last: Micros | null = null
        for (const now of clock) {
          const ts = nextServerTs(last, micros(now))
          if (last !== null) assert.isTrue(ts > last)
          assert.isTrue(ts >= now)
          assert.isTrue(Number.isSafeInteger(ts))
          last = ts
        }
      })
    )
  })
})

describe("nowMicros", () => {
  it("is an integer number of microseconds that does not go back", () => {
    let previous = nowMicros()
    for (let i = 0; i < 1000; i++) {
      const now = nowMicros()
      assert.isTrue(Number.isSafeInteger(now))
      assert.isTrue(now >= previous)
      previous = now
    }
    assert.isTrue(Math.abs(previous / 1000 - Date.now()) < 60_000)
  })
})
