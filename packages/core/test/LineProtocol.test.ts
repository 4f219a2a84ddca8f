import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
import {
  FieldKind,
  NO_TIMESTAMP,
  parseLineProtocol,
  parsePrecision,
  type Precision
} from "../src/ingest/LineProtocol.js"
import { parse, ok, writes, numberJsons, numberJson } from "./lineProtocolSupport.js"

// parsePrecision and the grammar of parseLineProtocol. Escaping, malformed lines and precision:
// LineProtocol.errors.test.ts; what clients write and the parser's shortcuts: LineProtocol.clients.test.ts.

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
