import { Point } from "@influxdata/influxdb-client"
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
import { NO_TIMESTAMP, parseLineProtocol, parseLineProtocolInFull, type Precision } from "../src/ingest/LineProtocol.js"
import { MAX_SECONDS } from "../src/Time.js"
import { MAX_MICROS, ok, writes } from "./lineProtocolSupport.js"

// parseLineProtocol reads back what @influxdata/influxdb-client writes; its shortcuts give what the full scan gives.

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
