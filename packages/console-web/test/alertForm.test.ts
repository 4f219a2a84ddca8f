import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import {
  conditionText,
  fieldOfPath,
  localTimeToIso,
  receiverBody,
  ruleBody,
  ruleDraftOf,
  silenceUntil
} from "../src/browser/alertForm.js"

describe("conditionText", () => {
  it("reads a condition as a person would", () => {
    assert.strictEqual(conditionText({ above: 90 }), "above 90")
    assert.strictEqual(conditionText({ below: 5 }), "below 5")
    assert.strictEqual(conditionText({ below: -2.5 }), "below -2.5")
    assert.strictEqual(conditionText({ noDataFor: 300 }), "no data for 5 min")
    assert.strictEqual(conditionText({ noDataFor: 90 }), "no data for 1 min 30 s")
    assert.strictEqual(conditionText({ noDataFor: 86_400 }), "no data for 24 h")
  })
  it("shows a condition of no known kind as its JSON", () => {
    assert.strictEqual(conditionText({ within: 3 }), '{"within":3}')
  })
})

describe("ruleBody", () => {
  const draft = {
    name: "CPU hot",
    streamName: "cpu",
    kind: "above" as const,
    value: " 90 ",
    for: "60",
    receiverIds: ["r1"]
  }
  it("sends the condition and for as numbers", () => {
    assert.deepStrictEqual(ruleBody(draft), {
      name: "CPU hot",
      streamName: "cpu",
      condition: { above: 90 },
      for: 60,
      receiverIds: ["r1"]
    })
    assert.deepStrictEqual(ruleBody({ ...draft, kind: "noDataFor", value: "300" }).condition, { noDataFor: 300 })
  })
  it("leaves out an empty for (the server's default) and sends text that is no number as typed", () => {
    assert.isFalse("for" in ruleBody({ ...draft, for: " " }))
    assert.deepStrictEqual(ruleBody({ ...draft, value: "hot" }).condition as unknown, { above: "hot" })
  })
  it("round-trips a stored rule through its form", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("above", "below", "noDataFor"),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.nat(86_400),
        (kind, n, seconds) => {
          const rule = { name: "r", streamName: "s", condition: { [kind]: n }, for: seconds, receiverIds: ["a", "b"] }
          const body = ruleBody(ruleDraftOf(rule))
          assert.deepStrictEqual(body.condition as unknown, { [kind]: Object.is(n, -0) ? 0 : n })
          assert.strictEqual(body.for, seconds)
          assert.deepStrictEqual(body.receiverIds, ["a", "b"])
        }
      )
    )
  })
})

describe("receiverBody", () => {
  const base = { name: "ops", kind: "webhook" as const, url: "http://127.0.0.1:9/hook" }
  it("leaves the secret out to keep it, sends null to remove it and the text to set it", () => {
    assert.isFalse("secret" in receiverBody({ ...base, secret: { action: "keep" } }))
    assert.strictEqual(receiverBody({ ...base, secret: { action: "remove" } }).secret, null)
    assert.strictEqual(receiverBody({ ...base, secret: { action: "set", value: "s3" } }).secret, "s3")
  })
})

describe("fieldOfPath", () => {
  it("names the top-level field of a path", () => {
    assert.strictEqual(fieldOfPath("name"), "name")
    assert.strictEqual(fieldOfPath("condition.limit"), "condition")
    assert.strictEqual(fieldOfPath("receiverIds[2]"), "receiverIds")
    assert.strictEqual(fieldOfPath(undefined), undefined)
    assert.strictEqual(fieldOfPath(""), undefined)
  })
})

describe("silence times", () => {
  it("ends a preset silence its length after now, in ISO 8601 UTC", () => {
    assert.strictEqual(silenceUntil(Date.UTC(2026, 11, 6, 12, 0), 3600), "2026-12-06T13:00:00.000Z")
  })
  it("reads a datetime-local value as a time with a zone, nothing for an empty one", () => {
    const iso = localTimeToIso("2026-12-06T18:00")
    assert.isDefined(iso)
    assert.strictEqual(new Date(iso!).getTime(), new Date("2026-12-06T18:00").getTime())
    assert.match(iso!, /Z$/)
    assert.strictEqual(localTimeToIso(""), undefined)
    assert.strictEqual(localTimeToIso("not a time"), undefined)
  })
})
