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
  it("shows a label as its text, cut to the length asked", () => {
    assert.strictEqual(summarize("label", { label: "All good" }), "All good")
    const long = summarize("html", { html: "x".repeat(200) }, 20)
    assert.strictEqual(long.length, 20)
    assert.isTrue(long.endsWith("\u2026"))
  })
  it("reads each type as a person would: a leaderboard's leader first, a list's first items, never JSON", () => {
    assert.strictEqual(
      summarize("leaderboard", examplePoints.leaderboard),
      "1. Alice 42 \u00b7 2. Bob 37 \u00b7 3. Chen 30"
    )
    assert.strictEqual(summarize("list", examplePoints.list), "Call the supplier \u00b7 Ship order 1042")
    assert.strictEqual(summarize("text-feed", examplePoints["text-feed"]), "Deploy finished: Version 1.4.2 is live.")
    assert.strictEqual(summarize("pie-chart", examplePoints["pie-chart"]), "Web 55 \u00b7 Mobile 30 \u00b7 Other 15")
    assert.strictEqual(summarize("world-map", examplePoints["world-map"]), "London")
    assert.strictEqual(summarize("table", examplePoints.table), "North, 1,204 (+1 more rows)")
    assert.strictEqual(summarize("xy-graph", { x: 1, y: 2 }), "x 1, y 2")
    assert.strictEqual(summarize("html", { html: "<b>Hello</b> from the console" }), "Hello from the console")
    const board = {
      leaderboard: Array.from({ length: 5 }, (_, i) => ({ name: `P${i}`, value: 10 - i, suffix: " pts" }))
    }
    assert.strictEqual(
      summarize("leaderboard", board, 200),
      "1. P0 10 pts \u00b7 2. P1 9 pts \u00b7 3. P2 8 pts (+2 more)"
    )
    for (const type of WidgetType.literals) {
      const stored = Either.getOrThrow(decodePoint(type, examplePoints[type], "point", defaultLimits))
      const point =
        stored._tag === "Put"
          ? (stored as { entries?: ReadonlyArray<{ point: unknown }> }).entries?.[0]?.point
          : undefined
      const shown = summarize(type, point ?? examplePoints[type], 200)
      assert.notMatch(shown, /^[[{]/, `${type} shown as JSON: ${shown}`)
    }
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
