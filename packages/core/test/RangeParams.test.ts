import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { isRangeRead, type RangeParams, rangeQueryOf } from "../src/RangeParams.js"

const ok = (params: RangeParams) => {
  const query = rangeQueryOf(params)
  if (Either.isLeft(query)) return assert.fail(`refused: ${query.left.message}`)
  return query.right
}

const refused = (params: RangeParams) => {
  const query = rangeQueryOf(params)
  if (Either.isRight(query)) return assert.fail(`accepted ${JSON.stringify(params)}`)
  assert.strictEqual(query.left._tag, "InvalidRequest")
  return query.left.path
}

describe("rangeQueryOf (README, Range reads)", () => {
  it("any of from, to or points makes a range read", () => {
    assert.isFalse(isRangeRead({}))
    assert.isFalse(isRangeRead({ since: "0", limit: "5" }))
    for (const params of [{ from: "1" }, { to: "1" }, { points: "2" }]) assert.isTrue(isRangeRead(params))
  })

  it("bounds are decimal seconds, exact to the microsecond; from rounds up, to rounds down", () => {
    assert.deepStrictEqual(ok({ from: "1700000000", to: "1700000000.25", points: "10" }), {
      from: 1_700_000_000_000_000,
      since: null,
      to: 1_700_000_000_250_000,
      points: 10,
      limit: null
    } as never)
    assert.strictEqual(ok({ from: "1.0000001" }).from, 1_000_001)
    assert.strictEqual(ok({ to: "1.0000019" }).to, 1_000_001)
    assert.strictEqual(ok({ from: ".5" }).from, 500_000)
    assert.strictEqual(ok({ from: "0" }).from, 0)
    assert.strictEqual(ok({ to: "4294967295" }).to, 4_294_967_295_000_000)
    // 1732000000.123457 as a double times 1e6 is not exact; the digits are.
    assert.strictEqual(ok({ to: "1732000000.123457" }).to, 1_732_000_000_123_457)
  })

  it("since stands in for from, as the export read reads it; limit pages without points", () => {
    const q = ok({ since: "1700000000.5", to: "1700000001", limit: "7" })
    assert.deepStrictEqual([q.from, q.since, q.to, q.limit], [null, 1_700_000_000_500_000, 1_700_000_001_000_000, 7])
    assert.strictEqual(ok({ since: "0", points: "3" }).since, -1)
  })

  it("bad parameters are 400 invalid_request with path naming the parameter", () => {
    for (const [params, path] of [
      [{ since: "1", from: "1" }, "since"],
      [{ from: "" }, "from"],
      [{ from: "1e9" }, "from"],
      [{ from: "-1" }, "from"],
      [{ from: "Infinity" }, "from"],
      [{ from: "0x10" }, "from"],
      [{ from: "." }, "from"],
      [{ from: " 1" }, "from"],
      [{ to: "abc" }, "to"],
      [{ to: "4294967296" }, "to"],
      [{ since: "1e3", to: "5" }, "since"],
      [{ since: "-1", to: "5" }, "since"],
      [{ from: "2", to: "1" }, "to"],
      [{ points: "1" }, "points"],
      [{ points: "10001" }, "points"],
      [{ points: "2.0" }, "points"],
      [{ points: "+5" }, "points"],
      [{ points: "" }, "points"],
      [{ points: "5", limit: "10" }, "limit"],
      [{ from: "1", limit: "0" }, "limit"],
      [{ from: "1", limit: "100001" }, "limit"]
    ] as const) {
      assert.strictEqual(refused(params), path, JSON.stringify(params))
    }
    assert.deepStrictEqual(ok({ from: "1", to: "1", points: "2" }).points, 2)
    assert.deepStrictEqual(ok({ from: "1", points: "10000" }).points, 10_000)
  })
})
