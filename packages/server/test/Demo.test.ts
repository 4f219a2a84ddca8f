import { CreateDashboardBody, decodePoint, defaultLimits } from "@dashstream/core"
import { assert, describe, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { demoFeed, demoLine, demoWidgets } from "../src/Demo.js"

/**
 * The demo of `serve --demo` (docs/api.md section 8.5) as data: its widgets and layout, and the points its feed makes,
 * checked by the rules a push and a dashboard obey. The process itself is test/e2e/demo.test.ts.
 */

/** A seeded source of numbers in [0, 1) (a linear congruential generator), so that a failure repeats. */
const seeded = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
  return seed / 2 ** 31
}

describe("the demo", () => {
  it("has a dozen widgets of different types whose tiles make a valid dashboard filling 12 columns", () => {
    assert.strictEqual(demoWidgets.length, 12)
    assert.strictEqual(new Set(demoWidgets.map((w) => w.type)).size, 12)
    const body = Schema.decodeUnknownEither(CreateDashboardBody)({
      name: "Demo",
      tiles: demoWidgets.map(({ streamName, x, y, w, h, options }) => ({ streamName, x, y, w, h, options }))
    })
    assert.isTrue(Either.isRight(body), String(Either.isLeft(body) && body.left.message))
    const rows = Math.max(...demoWidgets.map((w) => w.y + w.h))
    const area = demoWidgets.reduce((sum, w) => sum + w.w * w.h, 0)
    assert.strictEqual(area, 12 * rows, "the tiles leave a hole in the grid")
  })

  it("feeds every widget points its type accepts, for hours of ticks", () => {
    const next = demoFeed(seeded(7))
    const types = new Map(demoWidgets.map((w) => [w.streamName, w.type]))
    const fed = new Set<string>()
    const start = 1_765_000_000
    for (let tick = 0; tick < 3_000; tick++) {
      for (const [streamName, point] of next(start + tick * 3)) {
        const type = types.get(streamName)
        assert.isDefined(type, `the feed pushes to ${streamName}, which is no demo widget`)
        const decoded = decodePoint(type!, point, "point", defaultLimits)
        assert.isTrue(Either.isRight(decoded), `${streamName}: ${JSON.stringify(point)}`)
        fed.add(streamName)
      }
    }
    assert.deepStrictEqual([...fed].sort(), [...types.keys()].sort())
  })

  it('keeps the numbers and words plausible: percentages within 0-100, revenue growing, no "1 changes"', () => {
    const next = demoFeed(seeded(11))
    let revenue = -1
    const midnight = 1_764_979_200
    for (let tick = 0; tick < 2_000; tick++) {
      const points = new Map(next(midnight + tick * 3))
      for (const name of ["CPU load", "Disk used"]) {
        const { number } = points.get(name) as { number: number }
        assert.isTrue(number >= 0 && number <= 100, `${name} ${number}`)
      }
      const { number } = points.get("Revenue today") as { number: number }
      assert.isAtLeast(number, revenue)
      revenue = number
      const deploy = points.get("Deploys") as { msg: string } | undefined
      if (deploy !== undefined) assert.notMatch(deploy.msg, /^1 changes/, "a deploy of 1 changes")
    }
  })

  it("keeps a wall plausible from its first tick to days on: full lists, the day's signups and sales", () => {
    const next = demoFeed(seeded(5))
    const saturday = 1_764_979_200
    const leader = (points: Map<string, unknown>) =>
      Math.max(
        ...(points.get("Top sellers") as { leaderboard: Array<{ value: number }> }).leaderboard.map((e) => e.value)
      )
    // The latest orders fill their list from the first tick.
    const first = new Map(next(saturday - 3))
    assert.strictEqual((first.get("Latest orders") as { list: Array<unknown> }).list.length, 6)
    let last = new Map<string, unknown>()
    // A whole day of ticks: today's bar rises from 0 and never towers over the days before it.
    for (let tick = 0; tick < 28_800; tick++) {
      last = new Map(next(saturday + tick * 3))
      const chart = (last.get("Signups this week") as { chart: Array<{ value: number }> }).chart.map((c) => c.value)
      assert.isAtMost(chart[5]!, 2 * Math.max(...chart.slice(0, 5)), `Saturday's signups ${chart}`)
    }
    assert.isAbove(leader(last), 100)
    // Past midnight, Sunday: the day's sales start again.
    const sunday = new Map(next(saturday + 86_400 + 3))
    assert.isBelow(leader(sunday), 100)
  })

  it("prints the link, and says when it replaces the link of an earlier start", () => {
    assert.strictEqual(
      demoLine("http://127.0.0.1:8080", "dv_abc", false),
      "Demo dashboard: http://127.0.0.1:8080/d/dv_abc"
    )
    assert.match(
      demoLine("http://127.0.0.1:8080/ds", "dv_abc", true),
      /^Demo dashboard: http:\/\/127\.0\.0\.1:8080\/ds\/d\/dv_abc \(a new link/
    )
  })
})
