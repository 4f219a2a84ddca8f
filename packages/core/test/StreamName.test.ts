import { assert, describe, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import * as fc from "fast-check"
import { isStreamName, StreamName, streamNameProblem } from "../src/StreamName.js"

describe("StreamName (docs/api.md section 2)", () => {
  it("refuses lone surrogates, C0, DEL and C1 controls, '/', and the empty name", () => {
    for (const name of [
      "",
      "x\ud800y",
      "\udc00",
      "a\ud83d",
      "\u0000",
      "a\u001f",
      "\u007f",
      "\u0080",
      "x\u0085",
      "\u009f",
      "a/b"
    ]) {
      assert.isFalse(isStreamName(name), JSON.stringify(name))
      assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(StreamName)(name)), JSON.stringify(name))
    }
  })

  it("counts the 255 limit in code points, not UTF-16 units", () => {
    assert.isTrue(isStreamName("🎉".repeat(255)))
    assert.isTrue(isStreamName("a".repeat(255)))
    assert.isFalse(isStreamName("🎉".repeat(256)))
    assert.isFalse(isStreamName("a".repeat(256)))
    assert.isFalse(isStreamName("🎉".repeat(254) + "ab"))
    assert.strictEqual(streamNameProblem("a".repeat(1_000_000)), "stream name must be at most 255 characters")
  })

  it("accepts the characters next to the forbidden ranges and well-formed pairs", () => {
    for (const name of [" ", "~", "\u00a0", "\ud7ff", "\ue000", "\ufffd", "\ud83d\ude00", "ünï ✓"]) {
      assert.isTrue(isStreamName(name), JSON.stringify(name))
    }
  })

  it("decides every name as the rule says, printable ASCII ones (checked without regular expressions) included", () => {
    // The rule of docs/api.md section 2, written out plainly: 1 to 255 code points, no lone surrogate, no C0, DEL, C1, '/'.
    const rule = (s: string): boolean => {
      const points = [...s]
      if (points.length === 0 || points.length > 255) return false
      return points.every((p) => {
        const c = p.codePointAt(0)!
        if (c >= 0xd800 && c <= 0xdfff) return false
        return !(c <= 0x1f || (c >= 0x7f && c <= 0x9f) || c === 0x2f)
      })
    }
    const char = fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
      fc.constantFrom("/", "\u0000", "\u001f", "\u007f", "\u0080", "\u009f", "\u00a0", "\ud800", "\udc00", "🎉", "ü")
    )
    const name = fc.oneof(
      fc.array(char, { maxLength: 20 }).map((cs) => cs.join("")),
      fc.array(char, { minLength: 250, maxLength: 260 }).map((cs) => cs.join(""))
    )
    fc.assert(
      fc.property(name, (s) => {
        assert.strictEqual(isStreamName(s), rule(s), JSON.stringify(s))
        assert.strictEqual(streamNameProblem(s) === undefined, rule(s))
      }),
      { numRuns: 2000 }
    )
  })
})
