import { assert, describe, it } from "@effect/vitest"
import { decodePoint, defaultLimits, WidgetType } from "@dashstream/core"
import { Either, Schema } from "effect"
import { examplePoints, exampleText, formatAge, summarize } from "../src/browser/examples.js"
import { fragmentToken } from "../src/browser/session.js"

describe("examplePoints", () => {
  const types = WidgetType.literals
  it("has an example for every widget type, and only for those", () => {
    assert.deepStrictEqual(Object.keys(examplePoints).sort(), [...types].sort())
  })
  for (const type of types) {
    it(`the ${type} example is a point the server stores`, () => {
      const op = decodePoint(Schema.decodeSync(WidgetType)(type), JSON.parse(exampleText(type)), "point", defaultLimits)
      assert.isTrue(Either.isRight(op), JSON.stringify(op))
      assert.notStrictEqual(Either.getOrThrow(op)._tag, "Clear")
    })
  }
})

describe("summarize", () => {
  it("shows numeric points as their value with prefix and suffix", () => {
    assert.strictEqual(summarize("number", { number: 1284.5, prefix: "$" }), "$1,284.5")
    assert.strictEqual(summarize("dial", { number: 87, suffix: "%" }), "87%")
  })
  it("shows a label as its text and other points as JSON, cut to the length asked", () => {
    assert.strictEqual(summarize("label", { label: "All good" }), "All good")
    assert.strictEqual(summarize("xy-graph", { x: 1, y: 2 }), '{"x":1,"y":2}')
    const long = summarize("html", { html: "x".repeat(200) }, 20)
    assert.strictEqual(long.length, 20)
    assert.isTrue(long.endsWith("\u2026"))
  })
})

describe("formatAge", () => {
  it("counts in whole seconds, minutes, hours and days", () => {
    assert.strictEqual(formatAge(100, 102), "just now")
    assert.strictEqual(formatAge(100, 99), "just now")
    assert.strictEqual(formatAge(100, 112.9), "12 s")
    assert.strictEqual(formatAge(0, 5 * 60 + 59), "5 min")
    assert.strictEqual(formatAge(0, 3 * 3600 + 1), "3 h")
    assert.strictEqual(formatAge(0, 2 * 86_400 + 5), "2 d")
  })
})

describe("fragmentToken", () => {
  it("reads the first-run link's token from the fragment", () => {
    assert.strictEqual(fragmentToken("#token=abc123"), "abc123")
    assert.strictEqual(fragmentToken("#token=a%2Bb"), "a+b")
    assert.isUndefined(fragmentToken(""))
    assert.isUndefined(fragmentToken("#/accounts/1"))
    assert.isUndefined(fragmentToken("#token="))
  })
})
