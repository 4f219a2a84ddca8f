import { assert, describe, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { isStreamName, StreamName, streamNameProblem } from "../src/StreamName.js"

describe("StreamName (contract section 2; issue 13, defect 5)", () => {
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
})
