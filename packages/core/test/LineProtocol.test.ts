import { Point } from "@influxdata/influxdb-client"
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
import {
  FieldKind,
  type LineBatch,
  NO_TIMESTAMP,
  parseLineProtocol,
  parseLineProtocolInFull,
  parsePrecision,
  type Precision
} from "../src/ingest/LineProtocol.js"
import { MAX_SECONDS, MICROS_PER_SECOND } from "../src/Time.js"

const MAX_MICROS = MAX_SECONDS * MICROS_PER_SECOND

const parse = (body: string, precision: Precision = "ns", maxFieldValues = 100_000) =>
  parseLineProtocol(body, { precision, maxFieldValues })

const ok = (body: string, precision: Precision = "ns"): LineBatch => {
  const result = parse(body, precision)
  if (Either.isLeft(result)) assert.fail(`${JSON.stringify(body)}: ${result.left.message}`)
  return result.right
}

/** Each write as [stream, field key, kind, number, text, timestamp, line]. */
const writes = (batch: LineBatch) =>
  Array.from({ length: batch.size }, (_, i) => [
    batch.streams[i],
    batch.fieldKeys[i],
    batch.kinds[i],
    batch.numbers[i],
    batch.text(i),
    batch.timestamps[i],
    batch.lines[i]
  ])

/** `LineBatch.numberJsonText` of `writes`, cut into each write's text (`undefined`: none), in `writes`' order. */
const numberJsons = (batch: LineBatch, writes: ReadonlyArray<number>): Array<string | undefined> => {
  const start = new Int32Array(batch.size)
  const end = new Int32Array(batch.size)
  const text = batch.numberJsonText(writes, start, end)
  // The texts follow one another in `writes`' order.
  let at = 0
  return writes.map((i) => {
    if (end[i] === 0) return undefined
    assert.strictEqual(start[i], at)
    at = end[i]!
    return text.slice(start[i], end[i])
  })
}

/** Write `i`'s point JSON (`LineBatch.numberJsonText` of it alone), `undefined` when the body's text is not it. */
const numberJson = (batch: LineBatch, i: number): string | undefined => numberJsons(batch, [i])[0]

const parseError = (body: string, precision: Precision = "ns") => {
  const result = parse(body, precision)
  if (Either.isRight(result)) assert.fail(`${JSON.stringify(body)} parsed: ${JSON.stringify(writes(result.right))}`)
  return result.left
}

describe("parsePrecision", () => {
  it("accepts 1.x and 2.x precisions, normalised, and nanoseconds when absent or empty", () => {
    const v1: Array<[string, Precision]> = [
      ["n", "ns"],
      ["ns", "ns"],
      ["u", "us"],
      ["us", "us"],
      ["ms", "ms"],
      ["s", "s"],
      ["m", "m"],
      ["h", "h"]
    ]
    for (const [text, precision] of v1) assert.deepStrictEqual(parsePrecision(text, "v1"), Either.right(precision))
    for (const text of ["ns", "us", "ms", "s"] as const) {
      assert.deepStrictEqual(parsePrecision(text, "v2"), Either.right(text))
    }
    for (const api of ["v1", "v2"] as const) {
      for (const text of [undefined, null, ""]) assert.deepStrictEqual(parsePrecision(text, api), Either.right("ns"))
    }
  })

  it("refuses any other value, 2.x also the 1.x-only units, naming the allowed ones", () => {
    for (const text of ["n", "u", "m", "h", "NS", "rfc3339", "1", " s", "constructor"]) {
      const result = parsePrecision(text, "v2")
      assert.isTrue(Either.isLeft(result), text)
      if (Either.isLeft(result)) {
        assert.strictEqual(result.left._tag, "InvalidRequest")
        assert.include(result.left.message, "ns, us, ms or s")
      }
    }
    for (const text of ["S", "sec", "µs", "toString", "d"]) {
      const result = parsePrecision(text, "v1")
      assert.isTrue(Either.isLeft(result), text)
      if (Either.isLeft(result)) assert.include(result.left.message, "n, ns, u, us, ms, s, m or h")
    }
  })
})

describe("parseLineProtocol: the grammar", () => {
  it("reads measurement, tags, fields and timestamp; the stream name sorts tags by key", () => {
    assert.deepStrictEqual(writes(ok("cpu,host=web1,cpu=cpu0 usage_idle=97.5,usage_user=1.25 1700000000123456789")), [
      ["cpu.usage_idle{cpu=cpu0,host=web1}", "usage_idle", FieldKind.Float, 97.5, "97.5", 1700000000123456, 1],
      ["cpu.usage_user{cpu=cpu0,host=web1}", "usage_user", FieldKind.Float, 1.25, "1.25", 1700000000123456, 1]
    ])
    assert.deepStrictEqual(writes(ok("weather temperature=82")), [
      ["weather.temperature", "temperature", FieldKind.Float, 82, "82", NO_TIMESTAMP, 1]
    ])
  })

  it("reads every value type: float, integer, unsigned, the ten booleans, strings", () => {
    const batch = ok(
      'm f=-1.234456e+78,g=1.,h=.5,i=12i,j=-007i,k=12u,l=18446744073709551615u,n=-9223372036854775808i,s="a b"'
    )
    assert.deepStrictEqual(writes(batch), [
      ["m.f", "f", FieldKind.Float, -1.234456e78, "-1.234456e+78", NO_TIMESTAMP, 1],
      ["m.g", "g", FieldKind.Float, 1, "1", NO_TIMESTAMP, 1],
      ["m.h", "h", FieldKind.Float, 0.5, "0.5", NO_TIMESTAMP, 1],
      ["m.i", "i", FieldKind.Integer, 12, "12", NO_TIMESTAMP, 1],
      ["m.j", "j", FieldKind.Integer, -7, "-7", NO_TIMESTAMP, 1],
      ["m.k", "k", FieldKind.Unsigned, 12, "12", NO_TIMESTAMP, 1],
      ["m.l", "l", FieldKind.Unsigned, 18446744073709551615, "18446744073709551615", NO_TIMESTAMP, 1],
      ["m.n", "n", FieldKind.Integer, -9223372036854775808, "-9223372036854775808", NO_TIMESTAMP, 1],
      ["m.s", "s", FieldKind.String, NaN, "a b", NO_TIMESTAMP, 1]
    ])
    for (const [word, value] of [
      ["t", 1],
      ["T", 1],
      ["true", 1],
      ["True", 1],
      ["TRUE", 1],
      ["f", 0],
      ["F", 0],
      ["false", 0],
      ["False", 0],
      ["FALSE", 0]
    ] as const) {
      assert.deepStrictEqual(writes(ok(`m b=${word}`)), [
        ["m.b", "b", FieldKind.Boolean, value, value === 1 ? "true" : "false", NO_TIMESTAMP, 1]
      ])
    }
  })

  it("renders values as text as the contract says (1e3 is 1000, 12i is 12, -0i is 0)", () => {
    const batch = ok("m a=1e3,b=12i,c=-0i,d=0007u,e=1e21,f=0.1,g=-0.0,h=123456789012345678901234567890")
    assert.deepStrictEqual(
      Array.from({ length: batch.size }, (_, i) => batch.text(i)),
      ["1000", "12", "0", "7", "1e+21", "0.1", "0", "1.2345678901234568e+29"]
    )
  })

  it("parses floats to the same double as Number() does", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 0, max: 3 }), (x, form) => {
        const text = [String(x), x.toExponential(), x.toFixed(3), x.toPrecision(17)][form]!
        if (!/^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(text)) return
        const batch = ok(`m v=${text}`)
        assert.isTrue(Object.is(batch.numbers[0], Number(text)) || (Number(text) === 0 && batch.numbers[0] === 0), text)
      }),
      { numRuns: 5000 }
    )
  })

  it("gives a number's point JSON from the body's text only when it is what serialising the number writes", () => {
    const json = (text: string) => numberJson(ok(`m v=${text}`), 0)
    // As the push benchmark and Telegraf write them: taken from the body.
    for (const text of ["97.312345678901", "-3.5", "0", "0.001", "0.000001", "1500", "-42", "123456789012345"]) {
      assert.strictEqual(json(text), `{"number":${text}}`, text)
    }
    assert.strictEqual(json("12i"), '{"number":12}')
    assert.strictEqual(json("-7i"), '{"number":-7}')
    assert.strictEqual(json("12u"), '{"number":12}')
    // Texts that `String` writes otherwise, strings and booleans: left to the store to serialise.
    for (const text of [
      "1.50",
      "1.",
      ".5",
      "-0",
      "-0.0",
      "007",
      "0.0000001",
      "1e3",
      "1E3",
      "1234567890123456",
      "-0i"
    ]) {
      assert.isUndefined(json(text), text)
    }
    for (const text of ["0007u", "1234567890123456i", '"7"', "t", "false"]) assert.isUndefined(json(text), text)
  })

  it("a number's point JSON taken from the body is the one JSON.stringify writes of its value", () => {
    const digits = (n: number) => fc.stringMatching(new RegExp(`^[0-9]{1,${n}}$`))
    const text = fc.oneof(
      fc
        .tuple(fc.boolean(), digits(18), fc.option(digits(18)), fc.constantFrom("", "i", "u"))
        .map(
          ([minus, int, fraction, suffix]) =>
            (minus && suffix !== "u" ? "-" : "") +
            int +
            (fraction === null || suffix !== "" ? "" : `.${fraction}`) +
            suffix
        ),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
      fc.double({ min: -1e6, max: 1e6, noNaN: true }).map((x) => x.toFixed(4)),
      fc.integer({ min: 0, max: 1_000_000 }).map((k) => (k / 10 + 0.012345678901).toString())
    )
    let taken = 0
    fc.assert(
      fc.property(text, (t) => {
        const parsed = parse(`m v=${t}`)
        if (Either.isLeft(parsed)) return
        const batch = parsed.right
        const json = numberJson(batch, 0)
        if (json === undefined) return
        taken++
        assert.strictEqual(json, JSON.stringify({ number: batch.numbers[0] }), t)
      }),
      { numRuns: 20_000 }
    )
    assert.isAbove(taken, 5_000)
  })

  it("gives many writes' point JSON in one text (numberJsonText) as it gives each alone, whatever the body and order", () => {
    const value = fc.oneof(
      fc.integer({ min: -1_000_000, max: 1_000_000 }).map(String),
      fc.integer({ min: 0, max: 1_000_000 }).map((k) => `${k / 10 + 0.012345678901}`),
      fc.constantFrom("12i", "-7i", "3u", "1.50", "1e3", "t", '"x"', '"é"', "-0")
    )
    // A tag value that is not ASCII makes the parser scan a copy of the body's units instead of its bytes.
    const line = fc
      .tuple(fc.constantFrom("cpu", "mem,host=a", "net,t=é"), fc.array(value, { minLength: 1, maxLength: 4 }))
      .map(([series, values]) => `${series} ${values.map((v, f) => `f${f}=${v}`).join(",")} 1000`)
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 30 }), fc.boolean(), fc.nat(), (lines, reverse, drop) => {
        const text = lines.join("\n")
        const batch = ok(text)
        const all = Array.from({ length: batch.size }, (_, i) => i)
        const writes = all.filter((i) => i % (2 + (drop % 3)) !== 0 || drop % 2 === 0)
        if (reverse) writes.reverse()
        assert.deepStrictEqual(
          numberJsons(batch, writes),
          writes.map((i) => numberJson(batch, i))
        )
        const fromBytes = parseLineProtocol(text, {
          precision: "ns",
          maxFieldValues: 100_000,
          bytes: Buffer.from(text, "utf8")
        })
        if (Either.isLeft(fromBytes)) assert.fail(fromBytes.left.message)
        assert.deepStrictEqual(numberJsons(fromBytes.right, writes), numberJsons(batch, writes))
      }),
      { numRuns: 2_000 }
    )
  })

  it("skips comments, blank lines and whitespace before a measurement, and counts them as lines", () => {
    const body = "# a comment\n\n   \t\n  cpu v=1\r\n\t# indented comment\r\n\r\nmem v=2 1000\n  \nnet v=3"
    assert.deepStrictEqual(writes(ok(body)), [
      ["cpu.v", "v", FieldKind.Float, 1, "1", NO_TIMESTAMP, 4],
      ["mem.v", "v", FieldKind.Float, 2, "2", 1, 7],
      ["net.v", "v", FieldKind.Float, 3, "3", NO_TIMESTAMP, 9]
    ])
    assert.strictEqual(ok("# only\n\n# comments\n").size, 0)
    assert.strictEqual(ok("").size, 0)
  })

  it("accepts CRLF line ends, several spaces before fields and timestamp, and spaces after the timestamp", () => {
    assert.deepStrictEqual(writes(ok('cpu  \t v=1   2000  \r\ncpu v=2i\r\ncpu v="x"\r\ncpu v=t\r\n')), [
      ["cpu.v", "v", FieldKind.Float, 1, "1", 2, 1],
      ["cpu.v", "v", FieldKind.Integer, 2, "2", NO_TIMESTAMP, 2],
      ["cpu.v", "v", FieldKind.String, NaN, "x", NO_TIMESTAMP, 3],
      ["cpu.v", "v", FieldKind.Boolean, 1, "true", NO_TIMESTAMP, 4]
    ])
  })

  it("keeps duplicate fields, in order (the later one wins when stored)", () => {
    assert.deepStrictEqual(
      ok("m a=1,a=2").numbers.map((n) => n),
      [1, 2]
    )
  })

  it("reads a string field that spans lines, and counts its lines", () => {
    assert.deepStrictEqual(writes(ok('a v=1\nb v="two\nlines",w="\\"x\\"\n"\nc v=3 17')), [
      ["a.v", "v", FieldKind.Float, 1, "1", NO_TIMESTAMP, 1],
      ["b.v", "v", FieldKind.String, NaN, "two\nlines", NO_TIMESTAMP, 2],
      ["b.w", "w", FieldKind.String, NaN, '"x"\n', NO_TIMESTAMP, 2],
      ["c.v", "v", FieldKind.Float, 3, "3", 0, 5]
    ])
  })
})

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

describe("parseLineProtocol reads back what @influxdata/influxdb-client's Point writes", () => {
  // Names: any Unicode except control characters (a stream name has none; the client writes \n, \r and \t as the two
  // characters `\n`, which InfluxDB reads back as such) and backslashes (the protocol cannot tell a trailing
  // backslash from an escape, and the client does not escape them). A measurement cannot start with `#` (a comment).
  // Characters: the ones line protocol escapes or treats specially, often; any other ASCII and any Unicode code point.
  const char = (specials: string) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...specials) },
      { weight: 3, arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }) },
      { weight: 1, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) }
    )
  const nameChars = fc
    .string({ unit: char(",= \"#'\u00e9\u20ac\ud83d\ude80\uff5e"), minLength: 1, maxLength: 8 })
    .filter((s) => !/[\u0000-\u001f\u007f-\u009f\\]/.test(s) && s !== "__proto__")
  const measurement = nameChars.filter((s) => !s.startsWith("#"))
  type Value =
    | { readonly kind: "float"; readonly v: number }
    | { readonly kind: "int"; readonly v: number }
    | { readonly kind: "uint"; readonly v: bigint }
    | { readonly kind: "bool"; readonly v: boolean }
    | { readonly kind: "string"; readonly v: string }
  const value: fc.Arbitrary<Value> = fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => ({ kind: "float" as const, v })),
    fc
      .oneof(fc.maxSafeInteger(), fc.double({ min: -9.2e18, max: 9.2e18, noNaN: true }).map(Math.floor))
      .map((v) => ({ kind: "int" as const, v })),
    fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((v) => ({ kind: "uint" as const, v })),
    fc.boolean().map((v) => ({ kind: "bool" as const, v })),
    fc
      .string({ unit: char('"\\,= \n\r\t#\u00e9\ud83d\ude80'), maxLength: 20 })
      .map((v) => ({ kind: "string" as const, v }))
  )
  const precision = fc.constantFrom<Precision>("ns", "us", "ms", "s")
  const point = fc.record({
    measurement,
    tags: fc.dictionary(nameChars, nameChars, { maxKeys: 4 }),
    fields: fc.dictionary(nameChars, value, { minKeys: 1, maxKeys: 5 }),
    // A fraction of the range of the precision, or none.
    time: fc.option(fc.double({ min: 0, max: 1, noNaN: true }))
  })
  const unitMicros: Record<Precision, number> = { ns: 0.001, us: 1, ms: 1_000, s: 1_000_000, m: 0, h: 0 }

  it("any measurement, tag set and field set, in any precision", () => {
    fc.assert(
      fc.property(
        fc.array(point, { minLength: 1, maxLength: 6 }),
        precision,
        fc.array(fc.constantFrom("\n", "\r\n", "\n# comment\n", "\n\n"), { minLength: 6, maxLength: 6 }),
        (points, precision, separators) => {
          let body = ""
          const expected: Array<[string, string, string, number, number]> = []
          points.forEach((p, k) => {
            const line = new Point(p.measurement)
            for (const [key, v] of Object.entries(p.tags)) line.tag(key, v)
            for (const [key, v] of Object.entries(p.fields)) {
              if (v.kind === "float") line.floatField(key, v.v)
              else if (v.kind === "int") line.intField(key, v.v)
              else if (v.kind === "uint") line.uintField(key, v.v.toString())
              else if (v.kind === "bool") line.booleanField(key, v.v)
              else line.stringField(key, v.v)
            }
            let micros = NO_TIMESTAMP
            if (p.time !== null) {
              // A time in range, as an integer in the precision's unit.
              const max =
                precision === "ns" ? BigInt(MAX_SECONDS) * 1_000_000_000n : BigInt(MAX_MICROS / unitMicros[precision])
              const t = BigInt(Math.floor(Number(max) * p.time))
              line.timestamp(t.toString())
              micros = precision === "ns" ? Number(t / 1000n) : Number(t) * unitMicros[precision]
            } else {
              line.timestamp("")
            }
            const lineNumber = body.split("\n").length
            body += line.toLineProtocol()! + separators[k]!
            const tagKeys = Object.keys(p.tags).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
            const suffix = tagKeys.length === 0 ? "" : `{${tagKeys.map((key) => `${key}=${p.tags[key]}`).join(",")}}`
            // The client writes fields sorted by key, as JavaScript sorts strings.
            for (const key of Object.keys(p.fields).sort()) {
              const v = p.fields[key]!
              const text =
                v.kind === "float"
                  ? String(v.v)
                  : v.kind === "int"
                    ? String(v.v)
                    : v.kind === "uint"
                      ? v.v.toString()
                      : v.kind === "bool"
                        ? String(v.v)
                        : v.v
              expected.push([`${p.measurement}.${key}${suffix}`, key, text, micros, lineNumber])
            }
          })
          const batch = ok(body, precision)
          assert.deepStrictEqual(
            Array.from({ length: batch.size }, (_, i): [string, string, string, number, number] => [
              batch.streams[i]!,
              batch.fieldKeys[i]!,
              batch.text(i),
              batch.timestamps[i]!,
              batch.lines[i]!
            ]),
            expected
          )
          // Numbers too: floats exactly, integers to the nearest double, booleans as 1 and 0.
          let i = 0
          for (const p of points) {
            for (const key of Object.keys(p.fields).sort()) {
              const v = p.fields[key]!
              const n = batch.numbers[i++]!
              if (v.kind === "string") assert.isNaN(n)
              else if (v.kind === "bool") assert.strictEqual(n, v.v ? 1 : 0)
              else if (v.kind === "uint") assert.strictEqual(n, Number(v.v))
              else assert.strictEqual(n, v.v === 0 ? 0 : v.v)
            }
          }
        }
      ),
      { numRuns: 1500 }
    )
  })
})

describe("parseLineProtocol's shortcuts give what the full scan gives", () => {
  // Bodies whose lines repeat a few series and field keys (as real bodies do, so that the shortcuts are taken), written
  // with escapes, quoted strings (over several lines too), odd whitespace and line ends; half of them also with every
  // kind of mistake, here and there.
  const pick = <A>(clean: fc.Arbitrary<A>, wrong: fc.Arbitrary<A>, withMistakes: boolean) =>
    withMistakes ? fc.oneof({ weight: 12, arbitrary: clean }, { weight: 1, arbitrary: wrong }) : clean
  const generated = (withMistakes: boolean) => {
    const nameChar = pick(
      fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom("a", "b", "c", "x1", "\u00e9", "\ud83d\ude80") },
        { weight: 3, arbitrary: fc.constantFrom("\\,", "\\ ", "\\=", "\\\\a", '\\"', '"', "#", "\t", "\r") }
      ),
      fc.constantFrom("\\", "\\\\", "\\\n", ",", "=", " ", "\n"),
      withMistakes
    )
    const name = fc.array(nameChar, { minLength: 1, maxLength: 4 }).map((cs) => cs.join(""))
    const tagKeys = withMistakes ? fc.array(name, { maxLength: 3 }) : fc.uniqueArray(name, { maxLength: 3 })
    // A measurement starting with `#` makes its line a comment, which a mistake would follow (a string over two lines).
    const measurement = withMistakes ? name : name.filter((s) => !s.startsWith("#"))
    const series = fc
      .tuple(measurement, tagKeys, fc.array(name, { minLength: 3, maxLength: 3 }), fc.boolean())
      .map(([measurement, keys, values, reversed]) => {
        const set = keys.map((k, i) => `,${k}=${values[i]}`)
        return measurement + (reversed ? set.reverse() : set).join("")
      })
    const value = pick(
      fc.oneof(
        fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
        fc.integer().map((v) => `${v}i`),
        fc.nat().map((v) => `${v}u`),
        fc.constantFrom("1", "-1.5", ".5", "1.e+78", "007i", "-0i", "12u", "t", "True", "FALSE", "f"),
        fc
          .array(fc.constantFrom("a", " ", ",", "=", '\\"', "\\\\", "\\a", "\n", "\r\n", "\u00e9"), {
            maxLength: 5
          })
          .map((cs) => `"${cs.join("")}"`)
      ),
      fc.constantFrom(
        "1e400",
        "-12u",
        "1.5i",
        "9223372036854775808i",
        "yes",
        "1.2.3",
        "",
        "-",
        "1e",
        '"a',
        '"a"b',
        '"\\"'
      ),
      withMistakes
    )
    const timestamp = pick(
      fc.oneof(
        fc.constant(""),
        fc.nat({ max: 1_000_000 }).map(String),
        fc.bigInt({ min: 0n, max: 4_294_967_295_000_000_000n }).map(String),
        fc.constantFrom("0", "-0", "000", "4294967295000000000")
      ),
      fc.constantFrom("-5", "12a", "1.5", "99999999999999999999999", "4294967295000000001", "-"),
      withMistakes
    )
    const space = pick(fc.constantFrom(" ", " ", " ", "  ", " \t"), fc.constantFrom("\t", ""), withMistakes)
    const line = fc.record({
      lead: fc.constantFrom("", "", "", " ", "\t", "\u0000"),
      series: fc.nat(),
      fields: fc.array(fc.tuple(fc.nat(), value), { minLength: withMistakes ? 0 : 1, maxLength: 4 }),
      separators: fc.tuple(
        space,
        space,
        // Only spaces may follow a timestamp (a line without one may end in tabs too).
        pick(fc.constantFrom("", "", " ", "  "), fc.constantFrom(" x", "\t", " \t"), withMistakes)
      ),
      timestamp,
      end: pick(
        fc.constantFrom("\n", "\n", "\n", "\r\n", "\n# a comment\n", "\n\n", "\n \t"),
        fc.constant("\r"),
        withMistakes
      )
    })
    return fc
      .record({
        series: fc.array(series, { minLength: 1, maxLength: 4 }),
        keys: fc.array(name, { minLength: 1, maxLength: 4 }),
        lines: fc.array(line, { minLength: 1, maxLength: 12 })
      })
      .map(({ keys, lines, series }) =>
        lines
          .map((l) => {
            const fields = l.fields.map(([k, v]) => `${keys[k % keys.length]}=${v}`).join(",")
            const [beforeFields, beforeTimestamp, after] = l.separators
            const ts = l.timestamp === "" ? "" : beforeTimestamp + l.timestamp
            return l.lead + series[l.series % series.length] + beforeFields + fields + ts + after + l.end
          })
          .join("")
      )
  }
  const body = fc.oneof(generated(false), generated(true))
  // Everything a parse gives: each write (its number as `Object.is` tells them apart), or the error.
  const outcome = (result: ReturnType<typeof parseLineProtocol>) =>
    Either.match(result, {
      onLeft: (e) => ({ error: e._tag, message: e.message, path: "path" in e ? e.path : undefined }),
      onRight: (batch) => ({
        writes: writes(batch).map((w) => w.map((x) => (typeof x === "number" && Object.is(x, -0) ? "-0" : x)))
      })
    })

  it("on generated line protocol, in every precision", () => {
    let parsed = 0
    fc.assert(
      fc.property(
        body,
        fc.constantFrom<Precision>("ns", "us", "ms", "s", "m", "h"),
        fc.oneof(fc.constant(100_000), fc.integer({ min: 1, max: 40 })),
        (body, precision, maxFieldValues) => {
          const options = { precision, maxFieldValues }
          const fast = outcome(parseLineProtocol(body, options))
          assert.deepStrictEqual(fast, outcome(parseLineProtocolInFull(body, options)), JSON.stringify(body))
          if ("writes" in fast) parsed++
        }
      ),
      { numRuns: 3000 }
    )
    // The generator makes bodies that parse too, not only mistakes.
    assert.isAbove(parsed, 300)
  })

  it("over the body's bytes (an ASCII body, as the server passes it) gives what the string's code units give", () => {
    // Bytes that are not the body's (here empty) make the parser copy the string's units instead: the reference.
    const units = new Uint8Array(0)
    // The generated bodies made ASCII, then some given back a name or string with é or 😀, or a byte that is not
    // UTF-8 (decoded as U+FFFD).
    const varied = fc.tuple(body, fc.constantFrom("", "", "é", "😀", "\uFFFD"), fc.nat()).map(([text, extra, at]) => {
      const plain = text.replace(/[^\x00-\x7f]/g, "x")
      const cut = plain.length === 0 ? 0 : at % plain.length
      return plain.slice(0, cut) + extra + plain.slice(cut)
    })
    let ascii = 0
    fc.assert(
      fc.property(varied, fc.constantFrom<Precision>("ns", "us", "s"), (text, precision) => {
        const options = { precision, maxFieldValues: 100_000 }
        const bytes = Buffer.from(text, "utf8")
        if (bytes.length === text.length) ascii++
        const reference = outcome(parseLineProtocol(text, { ...options, bytes: units }))
        assert.deepStrictEqual(outcome(parseLineProtocol(text, { ...options, bytes })), reference, JSON.stringify(text))
        assert.deepStrictEqual(outcome(parseLineProtocol(text, options)), reference, JSON.stringify(text))
      }),
      { numRuns: 1000 }
    )
    assert.isAbove(ascii, 200)
    // A byte that is not UTF-8 is one unit (U+FFFD) and one byte: the same length, but not ASCII.
    const bytes = Buffer.from([...Buffer.from("m,t=a"), 0x80, ...Buffer.from(" v=1 1\n")])
    const text = bytes.toString("utf8")
    assert.strictEqual(text.length, bytes.length)
    assert.deepStrictEqual(
      outcome(parseLineProtocol(text, { precision: "s", maxFieldValues: 10, bytes })),
      outcome(parseLineProtocol(text, { precision: "s", maxFieldValues: 10, bytes: units }))
    )
    assert.strictEqual(ok(text, "s").streams[0], "m.v{t=a\uFFFD}")
  })

  // More fields than a series keeps (64), differing here and there.
  const manyFields = [70, 66, 3].map((k) =>
    Array.from({ length: 70 }, (_, i) => `${i === k ? "other" : `f${i}`}=${i}`).join(",")
  )

  it("on bodies of one series again and again, with the same and other field keys", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.constantFrom(
              "cpu,host=a",
              "cpu,host=a\\ b",
              "cpu,host=ab",
              "cpu,host=a\\\\b",
              "cpu\\,x,host=a",
              "cpu\\\\ x"
            ),
            fc.constantFrom(
              "f=1",
              "f=1,g=2i",
              "g=2i,f=1",
              "f\\==1",
              "f\\\\=1,g=2",
              'f="a\\" b",g=t',
              "fg=1",
              "f=1,f=2",
              ...manyFields
            )
          ),
          { minLength: 1, maxLength: 20 }
        ),
        (lines) => {
          const text = lines.map(([s, f], k) => `${s} ${f} ${1_700_000_000 + k}\n`).join("")
          const options = { precision: "s" as const, maxFieldValues: 100_000 }
          const fast = outcome(parseLineProtocol(text, options))
          assert.deepStrictEqual(fast, outcome(parseLineProtocolInFull(text, options)))
          assert.property(fast, "writes")
        }
      )
    )
  })
})
