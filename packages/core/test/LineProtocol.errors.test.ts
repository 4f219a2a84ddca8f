import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
import { type Precision } from "../src/ingest/LineProtocol.js"
import { MAX_SECONDS } from "../src/Time.js"
import { MAX_MICROS, parse, ok, parseError } from "./lineProtocolSupport.js"

// parseLineProtocol: escaping (the reference's cases), malformed lines refused with their line number, precision.

describe("parseLineProtocol: escaping (the reference's cases)", () => {
  const cases: Array<[string, string, string, string]> = [
    // [line, stream, field key, value as text]
    ["weather,location=us\\,midwest temperature=82", "weather.temperature{location=us,midwest}", "temperature", "82"],
    ["weather,location=us-midwest temp\\=rature=82", "weather.temp=rature{location=us-midwest}", "temp=rature", "82"],
    [
      "weather,location\\ place=us-midwest temperature=82",
      "weather.temperature{location place=us-midwest}",
      "temperature",
      "82"
    ],
    ["wea\\,ther,location=us-midwest temperature=82", "wea,ther.temperature{location=us-midwest}", "temperature", "82"],
    ["wea\\ ther,location=us-midwest temperature=82", "wea ther.temperature{location=us-midwest}", "temperature", "82"],
    [
      'weather,location=us-midwest temperature="too\\"hot\\""',
      "weather.temperature{location=us-midwest}",
      "temperature",
      'too"hot"'
    ],
    ['w t="too hot/cold"', "w.t", "t", "too hot/cold"],
    ['w t="too hot\\cold"', "w.t", "t", "too hot\\cold"],
    ['w t="too hot\\\\cold"', "w.t", "t", "too hot\\cold"],
    ['w t="too hot\\\\\\cold"', "w.t", "t", "too hot\\\\cold"],
    ['w t="too hot\\\\\\\\cold"', "w.t", "t", "too hot\\\\cold"],
    ['w t="too hot\\\\\\\\\\cold"', "w.t", "t", "too hot\\\\\\cold"],
    [
      "we⛅️ther,location=us-midwest temper🔥ture=82",
      "we⛅️ther.temper🔥ture{location=us-midwest}",
      "temper🔥ture",
      "82"
    ],
    ['"weather",location=us-midwest temperature=87', '"weather".temperature{location=us-midwest}', "temperature", "87"],
    [
      '"measurement\\ with\\ quo⚡️es\\ and\\ emoji",tag\\ key\\ with\\ sp🚀ces=tag\\,value\\,with"commas" field_k\\ey="string field value, only \\" need be esc🍭ped"',
      '"measurement with quo⚡️es and emoji".field_k\\ey{tag key with sp🚀ces=tag,value,with"commas"}',
      "field_k\\ey",
      'string field value, only " need be esc🍭ped'
    ],
    ['my\\ Measurement fieldKey="string value"', "my Measurement.fieldKey", "fieldKey", "string value"],
    [
      "myMeasurement,tag\\ Key1=tag\\ Value1,tag\\ Key2=tag\\ Value2 fieldKey=100",
      "myMeasurement.fieldKey{tag Key1=tag Value1,tag Key2=tag Value2}",
      "fieldKey",
      "100"
    ],
    [
      'myMeasurement,tagKey=🍭 fieldKey="Launch 🚀" 1556813561098000000',
      "myMeasurement.fieldKey{tagKey=🍭}",
      "fieldKey",
      "Launch 🚀"
    ],
    // `\=` is an escape in the measurement too (docs/api.md section 13.1), quotes and `#` inside names are literal.
    ["a\\=b,k=v f=1", "a=b.f{k=v}", "f", "1"],
    ['m,k=v#1 f"=1', 'm.f"{k=v#1}', 'f"', "1"],
    // A backslash before anything else stays; the character after a backslash is escaped, so in `\\\\,` the comma is
    // escaped (and the second backslash removed), as InfluxDB 1.x reads it.
    ["m\\x,k\\y=v\\z f\\w=1", "m\\x.f\\w{k\\y=v\\z}", "f\\w", "1"],
    ["m\\\\,k=v f=1", "m\\,k=v.f", "f", "1"],
    // Tags come out in byte order of their keys, not in UTF-16 order (U+FF5E sorts before U+1F600 in UTF-8).
    ["m,😀=a,～=b,B=c,a=d f=1", "m.f{B=c,a=d,～=b,😀=a}", "f", "1"]
  ]
  for (const [line, stream, fieldKey, text] of cases) {
    it(line, () => {
      const batch = ok(line)
      assert.strictEqual(batch.size, 1)
      assert.strictEqual(batch.streams[0], stream)
      assert.strictEqual(batch.fieldKeys[0], fieldKey)
      assert.strictEqual(batch.text(0), text)
    })
  }
})

describe("parseLineProtocol: malformed lines are refused with their line number, and nothing is returned", () => {
  const cases: Array<[string, string]> = [
    // The reference's own invalid lines.
    ['mymeas value=9 "1466625759000000000"', "invalid timestamp"],
    ["weather,location=us-midwest temperature='too warm'", "invalid value"],
    // One per error of InfluxDB's parser (models/points.go).
    ["cpu", "missing fields"],
    ["cpu ", "missing fields"],
    ["cpu,host=a", "missing fields"],
    ["cpu,host=a ", "missing fields"],
    [",host=a value=1", "missing measurement"],
    ["cpu, value=1", "missing tag key"],
    ["cpu,=a value=1", "missing tag key"],
    ["cpu,host=a, value=1", "missing tag key"],
    ["cpu,host value=1", 'tag "host" has no value'],
    ["cpu,host= value=1", 'tag "host" has an empty value'],
    ["cpu,host=a=b value=1", 'unescaped "=" in its value'],
    ["cpu,host=a,host=b value=1", 'duplicate tag "host"'],
    ["cpu,z=1,host=a,host=b value=1", 'duplicate tag "host"'],
    ["cpu =1", "missing field key"],
    ["cpu value=1,=2", "missing field key"],
    ["cpu value=1,", "missing field key"],
    ["cpu value", 'field "value" has no value'],
    ["cpu value=1,b", 'field "b" has no value'],
    ["cpu value=", 'field "value" has no value'],
    ["cpu value= 1", 'field "value" has no value'],
    ["cpu value=,b=1", 'field "value" has no value'],
    ["cpu value=1.1.1", "invalid number"],
    ["cpu value=1e", "invalid number"],
    ["cpu value=1e+", "invalid number"],
    ["cpu value=.", "invalid number"],
    ["cpu value=-", "invalid number"],
    ["cpu value=-.", "invalid number"],
    ["cpu value=1-2", "invalid number"],
    ["cpu value=0x10", "invalid number"],
    ["cpu value=1_000", "invalid number"],
    ["cpu value=9i10", "invalid number"],
    ["cpu value=1.5i", "invalid number"],
    ["cpu value=1e3i", "invalid number"],
    ["cpu value=-1u", "invalid number"],
    ["cpu value=1ii", "invalid number"],
    ["cpu value=-i", "invalid number"],
    ["cpu value=NaN", "invalid value"],
    ["cpu value=nan", "invalid value"],
    ["cpu value=Inf", "invalid value"],
    ["cpu value=+1", "invalid value"],
    ["cpu value=1e400", "out of range"],
    ["cpu value=-1e400", "out of range"],
    ["cpu value=9223372036854775808i", "out of the 64-bit range"],
    ["cpu value=-9223372036854775809i", "out of the 64-bit range"],
    ["cpu value=18446744073709551616u", "out of the 64-bit range"],
    ["cpu value=tru", "invalid value"],
    ["cpu value=yes", "invalid value"],
    ["cpu value=tRUE", "invalid value"],
    ['cpu value="unterminated', "unbalanced quotes"],
    ['cpu value="escaped end\\"', "unbalanced quotes"],
    ['cpu value="a"b', "after the string value"],
    ["cpu value=1 12a", "invalid timestamp"],
    ["cpu value=1 1.5", "invalid timestamp"],
    ["cpu value=1 -", "invalid timestamp"],
    ["cpu value=1 1000 x", "unexpected text after the timestamp"],
    ["cpu value=1 1000 2000", "unexpected text after the timestamp"],
    ["cpu value=1\rx", "invalid number"],
    ["cpu value=1 -1", "before 1970"],
    ["cpu value=1 -1465839830100400200", "before 1970"],
    ["cpu value=1 4294967295000000001", "after 2106-02-07T06:28:15Z"],
    ["cpu value=1 9223372036854775807", "after 2106-02-07T06:28:15Z"],
    ["cpu value=1 99999999999999999999999999", "after 2106-02-07T06:28:15Z"]
  ]
  for (const [line, problem] of cases) {
    it(line, () => {
      // Line 5 of a body: a comment, a blank line, a good line and a line with a two-line string come before it.
      const body = `# header\n\ngood v=1\ngood s="two\nlines"\n${line}\ngood v=2\n`
      const error = parseError(body)
      assert.strictEqual(error._tag, "InvalidRequest")
      assert.strictEqual(error.path, "line 6")
      assert.match(error.message, /^line 6: /)
      assert.include(error.message, problem)
    })
  }

  it("quotes a long line cut to 100 characters", () => {
    const error = parseError(`m,${"k".repeat(500)} v=1`)
    assert.include(error.message, "... (506 characters)")
    assert.isBelow(error.message.length, 300)
  })

  it("refuses more field values than the limit with PayloadTooLarge", () => {
    const body = Array.from({ length: 10 }, (_, i) => `m a=${i},b=${i}`).join("\n")
    assert.isTrue(Either.isRight(parse(body, "ns", 20)))
    const result = parse(body, "ns", 19)
    assert.isTrue(Either.isLeft(result) && result.left._tag === "PayloadTooLarge")
  })
})

describe("parseLineProtocol: precision", () => {
  const MAX_NS = BigInt(MAX_SECONDS) * 1_000_000_000n
  const unitMicros: Record<Exclude<Precision, "ns">, bigint> = {
    us: 1n,
    ms: 1_000n,
    s: 1_000_000n,
    m: 60_000_000n,
    h: 3_600_000_000n
  }
  const tsOf = (ts: bigint | string, precision: Precision) => {
    const result = parse(`m v=1 ${ts}`, precision)
    return Either.isLeft(result) ? result.left.message : result.right.timestamps[0]
  }

  it("any nanosecond timestamp in range is trunc(ns / 1000) microseconds, exactly", () => {
    const ns = fc.oneof(
      fc.bigInt({ min: 0n, max: MAX_NS }),
      fc.bigInt({ min: MAX_NS - 10_000_000n, max: MAX_NS }),
      fc.bigInt({ min: 1_600_000_000_000_000_000n, max: 1_900_000_000_000_000_000n }),
      fc.bigInt({ min: 0n, max: 100_000n })
    )
    fc.assert(
      fc.property(ns, (t) => {
        assert.strictEqual(tsOf(t, "ns"), Number(t / 1000n))
      }),
      { numRuns: 5_000 }
    )
  })

  it("any timestamp in range of a coarser unit is that many microseconds, exactly", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("us", "ms", "s", "m", "h") as fc.Arbitrary<keyof typeof unitMicros>,
        fc.double({ min: 0, max: 1, noNaN: true }),
        (unit, x) => {
          const max = BigInt(MAX_MICROS) / unitMicros[unit]
          const t = BigInt(Math.floor(Number(max) * x))
          assert.strictEqual(tsOf(t, unit), Number(t * unitMicros[unit]))
          assert.strictEqual(tsOf(max, unit), Number(max * unitMicros[unit]))
          assert.include(String(tsOf(max + 1n, unit)), "after 2106")
        }
      ),
      { numRuns: 2000 }
    )
  })

  it("refuses a timestamp past the limit by one nanosecond, and any negative one; accepts -0 and leading zeros", () => {
    assert.strictEqual(tsOf(MAX_NS, "ns"), MAX_MICROS)
    assert.include(String(tsOf(MAX_NS + 1n, "ns")), "after 2106")
    assert.include(String(tsOf(-1n, "ns")), "before 1970")
    assert.include(String(tsOf("-1", "h")), "before 1970")
    assert.strictEqual(tsOf("-0", "s"), 0)
    assert.strictEqual(tsOf("0000001700000000", "s"), 1_700_000_000_000_000)
    assert.strictEqual(tsOf("999", "ns"), 0)
    assert.strictEqual(tsOf("1999", "ns"), 1)
    assert.strictEqual(tsOf("1700000000123456789", "ns"), 1700000000123456)
  })
})
