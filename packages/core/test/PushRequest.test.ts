import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { InvalidRequest, PayloadTooLarge, UnsupportedCommand } from "../src/Errors.js"
import { defaultLimits, type Limits } from "../src/Limits.js"
import type { WidgetType } from "../src/WidgetType.js"
import { decodeJsonPart, decodePushRequest, type PushRequest } from "../src/PushRequest.js"

const ok = (body: unknown, limits: Limits = defaultLimits): PushRequest => {
  const r = decodePushRequest(body, limits)
  if (Either.isLeft(r)) return assert.fail(`expected success, got ${r.left.path}: ${r.left.message}`)
  return r.right
}

const invalidAt = (body: unknown, path: string | undefined): string => {
  const r = decodePushRequest(body, defaultLimits)
  if (Either.isRight(r)) return assert.fail(`expected ${JSON.stringify(body)} to be rejected`)
  assert.instanceOf(r.left, InvalidRequest, r.left.message)
  assert.strictEqual(r.left.path, path)
  return r.left.message
}

describe("decodePushRequest: single stream (spec 4.2, 4.3)", () => {
  it("takes accessKey, streamName and point: one part, the body, whose point is at `point`", () => {
    const body = { accessKey: "k", streamName: "s", point: 42 }
    const r = ok(body)
    assert.strictEqual(r.accessKey, "k")
    assert.strictEqual(r.undeclared, "reject")
    assert.deepStrictEqual(r.parts, [{ streamName: "s", path: "point", value: body }])
    assert.strictEqual(r.streamNamePath?.("point"), "streamName")
    assert.deepStrictEqual(
      r.decode("number", body, "point", defaultLimits),
      decodeJsonPart("number", body, "point", defaultLimits)
    )
  })

  it("keeps a null or empty point as a point (it may be a clear)", () => {
    const r = ok({ accessKey: "k", streamName: "s", point: null })
    assert.deepStrictEqual(
      r.decode("label", r.parts[0]!.value, "point", defaultLimits),
      Either.right({ _tag: "Clear" })
    )
  })

  it("takes a command", () => {
    const r = ok({ accessKey: "k", streamName: "s", command: "clear" })
    assert.deepStrictEqual(
      r.decode("sparkline", r.parts[0]!.value, "point", defaultLimits),
      Either.right({ _tag: "Clear" })
    )
  })

  it("rejects a body that is not an object", () => {
    for (const body of [null, 42, "x", [{ accessKey: "k" }]]) invalidAt(body, undefined)
  })

  it("requires a string accessKey and streamName", () => {
    invalidAt({ streamName: "s", point: 1 }, "accessKey")
    invalidAt({ accessKey: 5, streamName: "s", point: 1 }, "accessKey")
    invalidAt({ accessKey: "k", point: 1 }, "streamName")
    invalidAt({ accessKey: "k", streamName: ["s"], point: 1 }, "streamName")
  })

  it("requires point or command, not both", () => {
    invalidAt({ accessKey: "k", streamName: "s" }, "point")
    assert.match(invalidAt({ accessKey: "k", streamName: "s", point: 1, command: "clear" }, "command"), /not both/)
  })

  it("rejects epoint with a message saying it is not supported", () => {
    assert.match(invalidAt({ accessKey: "k", streamName: "s", epoint: "abc" }, "epoint"), /epoint/)
  })
})

describe("decodePushRequest: multi-stream (spec 4.4)", () => {
  it("gives one part per stream with its path", () => {
    const r = ok({
      accessKey: "k",
      streams: [
        { streamName: "a", point: 1 },
        { streamName: "b", command: "clear" }
      ]
    })
    assert.deepStrictEqual(r.parts, [
      { streamName: "a", path: "streams[0].point", value: { streamName: "a", point: 1 } },
      { streamName: "b", path: "streams[1].point", value: { streamName: "b", command: "clear" } }
    ])
    assert.strictEqual(r.streamNamePath?.("streams[1].point"), "streams[1].streamName")
  })

  it("accepts an empty streams array", () => {
    assert.deepStrictEqual(ok({ accessKey: "k", streams: [] }).parts, [])
  })

  it("points errors at the stream", () => {
    invalidAt({ accessKey: "k", streams: [{ streamName: "a", point: 1 }, { point: 1 }] }, "streams[1].streamName")
    invalidAt({ accessKey: "k", streams: [{ streamName: "a", point: 1 }, 5] }, "streams[1]")
    invalidAt({ accessKey: "k", streams: [{ streamName: "a" }] }, "streams[0].point")
    invalidAt({ accessKey: "k", streams: [{ streamName: "a", epoint: "x" }] }, "streams[0].epoint")
    invalidAt({ accessKey: "k", streams: [{ streamName: "a", point: 1, command: "clear" }] }, "streams[0].command")
  })

  it("rejects streams that is not an array, or mixed with streamName/point", () => {
    invalidAt({ accessKey: "k", streams: { streamName: "a", point: 1 } }, "streams")
    invalidAt({ accessKey: "k", streamName: "a", streams: [] }, "streams")
    invalidAt({ accessKey: "k", point: 1, streams: [] }, "streams")
  })

  it("rejects more streams than the limit with PayloadTooLarge", () => {
    const limits = { ...defaultLimits, maxStreams: 2 }
    const streams = [1, 2, 3].map((i) => ({ streamName: `s${i}`, point: i }))
    assert.strictEqual(ok({ accessKey: "k", streams: streams.slice(0, 2) }, limits).parts.length, 2)
    const r = decodePushRequest({ accessKey: "k", streams }, limits)
    assert.isTrue(Either.isLeft(r))
    if (Either.isLeft(r)) {
      assert.instanceOf(r.left, PayloadTooLarge)
      assert.strictEqual(r.left.path, "streams")
    }
  })
})

const command = (type: WidgetType, command: unknown, pointPath: string) =>
  decodeJsonPart(type, { streamName: "s", command }, pointPath, defaultLimits)

describe("decodeJsonPart: commands (docs/api.md section 4)", () => {
  it("clears the six clear-command types", () => {
    for (const type of ["sparkline", "line-graph", "usa-map", "world-map", "text-feed", "xy-graph"] as const) {
      assert.deepStrictEqual(command(type, "clear", "point"), Either.right({ _tag: "Clear" }))
    }
  })

  it("rejects clear on other types, saying to push an empty point", () => {
    const r = command("leaderboard", "clear", "streams[1].point")
    assert.isTrue(Either.isLeft(r))
    if (Either.isLeft(r)) {
      assert.instanceOf(r.left, UnsupportedCommand)
      assert.strictEqual(r.left.path, "streams[1].command")
      assert.match(r.left.message, /empty point/)
    }
  })

  it("rejects unknown commands", () => {
    for (const c of ["reset", "CLEAR", null, 1]) {
      const r = command("sparkline", c, "point")
      assert.isTrue(Either.isLeft(r))
      if (Either.isLeft(r)) assert.strictEqual(r.left.path, "command")
    }
  })
})
