import { numericWidgetTypes, widgetTypes } from "@dashstream/contract"
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { checkRuleRefs, decodeRuleBody } from "../src/alerts/AlertRule.js"
import { decodeReceiverBody } from "../src/alerts/Receiver.js"
import type { WidgetType } from "../src/WidgetType.js"

/**
 * The bodies of alert rules and receivers (docs/api.md section 18): what is accepted, and the `path` of each refusal
 * as the admin API reports it.
 */

const rule = { name: "CPU high", streamName: "cpu", condition: { above: 90 }, receiverIds: ["r1"] }

const rulePath = (input: unknown) =>
  Either.match(decodeRuleBody(input), { onLeft: (e) => e.path ?? "", onRight: () => "ok" })

const receiver = { name: "Ops", kind: "webhook", url: "https://hooks.example.com/x" }

const receiverPath = (input: unknown) =>
  Either.match(decodeReceiverBody(input), { onLeft: (e) => e.path ?? "", onRight: () => "ok" })

describe("alert rule body", () => {
  it("accepts the three conditions, for 0 to 86400 whole seconds, and defaults for to 0", () => {
    for (const condition of [{ above: 1.5 }, { below: -3 }, { noDataFor: 10 }, { noDataFor: 31_536_000 }]) {
      assert.strictEqual(rulePath({ ...rule, condition }), "ok")
    }
    for (const f of [0, 1, 86_400]) assert.strictEqual(rulePath({ ...rule, for: f }), "ok")
    const decoded = Either.getOrThrow(decodeRuleBody(rule))
    assert.strictEqual(decoded.for, 0)
    assert.deepStrictEqual(decoded.condition, { above: 90 })
    assert.deepStrictEqual<ReadonlyArray<string>>(decoded.receiverIds, ["r1"])
  })

  it("refuses each bad field at its path", () => {
    const cases: Array<[unknown, string]> = [
      [{ ...rule, for: -1 }, "for"],
      [{ ...rule, for: 86_401 }, "for"],
      [{ ...rule, for: 1.5 }, "for"],
      [{ ...rule, for: "5" }, "for"],
      [{ ...rule, name: "" }, "name"],
      [{ ...rule, streamName: "a/b" }, "streamName"],
      [{ ...rule, receiverIds: "r1" }, "receiverIds"],
      [{ ...rule, receiverIds: ["r1", 3] }, "receiverIds[1]"],
      [{ ...rule, receiverIds: ["r1", "r2", "r1"] }, "receiverIds[2]"],
      [{ ...rule, receiverIds: Array.from({ length: 21 }, (_, i) => `r${i}`) }, "receiverIds"],
      [{ name: "x", streamName: "cpu", condition: { above: 1 } }, "receiverIds"]
    ]
    for (const [input, path] of cases) assert.strictEqual(rulePath(input), path, JSON.stringify(input))
  })

  it("refuses a bad condition at path condition", () => {
    const bad: Array<unknown> = [
      null,
      [],
      5,
      {},
      { above: 1, below: 2 },
      { above: "1" },
      { above: null },
      { below: Number.NaN },
      { noDataFor: 9 },
      { noDataFor: 31_536_001 },
      { noDataFor: 10.5 }
    ]
    for (const condition of bad) assert.strictEqual(rulePath({ ...rule, condition }), "condition", String(condition))
    assert.strictEqual(rulePath({ ...rule, condition: undefined }), "condition")
  })

  it("refuses unknown keys anywhere at their own path", () => {
    assert.strictEqual(rulePath({ ...rule, colour: "red" }), "colour")
    assert.strictEqual(rulePath({ ...rule, condition: { above: 1, limit: 2 } }), "condition.limit")
    assert.strictEqual(rulePath({ ...rule, condition: { over: 1 } }), "condition.over")
  })
})

describe("alert rule refs", () => {
  const types = new Map<string, WidgetType>(widgetTypes.map((type) => [`s-${type}`, type]))
  const receivers = new Set(["r1", "r2"])
  const refs = (changes: object) => {
    const decoded = Either.getOrThrow(decodeRuleBody({ ...rule, ...changes }))
    return Either.match(checkRuleRefs(decoded, types, receivers), { onLeft: (e) => e.path ?? "", onRight: () => "ok" })
  }

  it("above and below only on the contract's numeric widget types; noDataFor on any type", () => {
    for (const type of widgetTypes) {
      const numeric = numericWidgetTypes.includes(type)
      for (const condition of [{ above: 1 }, { below: 1 }]) {
        assert.strictEqual(refs({ streamName: `s-${type}`, condition }), numeric ? "ok" : "condition", type)
      }
      assert.strictEqual(refs({ streamName: `s-${type}`, condition: { noDataFor: 60 } }), "ok", type)
    }
  })

  it("a stream that is not a widget of the account: path streamName; an unknown receiver: receiverIds[i]", () => {
    assert.strictEqual(refs({ streamName: "nope" }), "streamName")
    assert.strictEqual(refs({ streamName: "s-number", receiverIds: ["r2", "r9"] }), "receiverIds[1]")
    assert.strictEqual(refs({ streamName: "s-number", receiverIds: [] }), "ok")
  })
})

describe("receiver body", () => {
  it("accepts the three kinds with an http(s) URL and an optional secret (null too)", () => {
    for (const kind of ["webhook", "slack", "alertmanager"])
      assert.strictEqual(receiverPath({ ...receiver, kind }), "ok")
    assert.strictEqual(receiverPath({ ...receiver, url: "http://127.0.0.1:9093" }), "ok")
    assert.strictEqual(receiverPath({ ...receiver, secret: "s3cret" }), "ok")
    assert.strictEqual(receiverPath({ ...receiver, secret: null }), "ok")
  })

  it("refuses each bad field at its path", () => {
    const cases: Array<[unknown, string]> = [
      [{ ...receiver, kind: "email" }, "kind"],
      [{ ...receiver, url: "ftp://example.com" }, "url"],
      [{ ...receiver, url: "hooks.example.com/x" }, "url"],
      [{ ...receiver, url: "javascript:alert(1)" }, "url"],
      [{ ...receiver, url: `https://example.com/${"x".repeat(2000)}` }, "url"],
      [{ ...receiver, url: 5 }, "url"],
      [{ ...receiver, secret: "" }, "secret"],
      [{ ...receiver, secret: 5 }, "secret"],
      [{ ...receiver, name: "" }, "name"],
      [{ ...receiver, headers: {} }, "headers"],
      [{ name: "x", kind: "slack" }, "url"]
    ]
    for (const [input, path] of cases) assert.strictEqual(receiverPath(input), path, JSON.stringify(input))
  })
})
