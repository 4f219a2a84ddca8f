import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { wholeMilliseconds } from "../src/alerts/AlertAdmin.js"
import { type Micros, micros } from "../src/Time.js"

/**
 * The pages of the transition history (docs/api.md section 18.3): a reader goes on from the last event's `at` as
 * answers show it (to the millisecond, exclusive), so a page never ends inside a millisecond whose events go on past
 * it, and reading page after page yields every event once, in order, whenever no millisecond holds more than a page.
 */

interface Event {
  readonly seq: number
  readonly at: Micros
}

/** What a store answers: the events after `after` (microseconds, exclusive), at most `limit`, ascending. */
const storeRead = (all: ReadonlyArray<Event>, after: number, limit: number) =>
  all.filter((e) => e.at > after).slice(0, limit)

/** Every page a reader gets from the start, each read on from the last `at` to the millisecond (as the API does). */
const readAll = (all: ReadonlyArray<Event>, limit: number): Array<ReadonlyArray<Event>> => {
  const pages: Array<ReadonlyArray<Event>> = []
  let after = 0
  for (;;) {
    const page = wholeMilliseconds(storeRead(all, after, limit + 1), limit)
    if (page.length === 0) return pages
    pages.push(page)
    after = Math.floor(page.at(-1)!.at / 1000) * 1000 + 999
  }
}

/** Ascending event times in few distinct milliseconds (so that many share one), microseconds. */
const eventsArb = (maxPerMillisecond: number) =>
  fc
    .array(fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: maxPerMillisecond })), {
      maxLength: 30
    })
    .map((groups) => {
      const events: Array<Event> = []
      let ms = 1_700_000_000_000
      for (const [gap, count] of groups) {
        ms += gap
        for (let i = 0; i < count; i++) events.push({ seq: events.length, at: micros(ms * 1000 + i) })
      }
      return events
    })

describe("alert event pages", () => {
  it.prop(
    "with at most a page per millisecond, the pages hold every event once, in order, none over the limit",
    [fc.integer({ min: 1, max: 8 }).chain((limit) => fc.tuple(fc.constant(limit), eventsArb(limit)))],
    ([[limit, all]]) => {
      const pages = readAll(all, limit)
      for (const page of pages) assert.isAtMost(page.length, limit)
      assert.deepStrictEqual(
        pages.flat().map((e) => e.seq),
        all.map((e) => e.seq)
      )
    }
  )

  it("a page ends before a millisecond that goes on past it, unless that millisecond fills the page", () => {
    const ms = (n: number, i = 0) => ({ seq: n * 10 + i, at: micros(n * 1000 + i) })
    assert.deepStrictEqual(wholeMilliseconds([ms(1), ms(2), ms(3, 0), ms(3, 1)], 3), [ms(1), ms(2)])
    assert.deepStrictEqual(wholeMilliseconds([ms(1), ms(2), ms(3)], 3), [ms(1), ms(2), ms(3)])
    assert.deepStrictEqual(wholeMilliseconds([ms(1), ms(2), ms(3), ms(4)], 3), [ms(1), ms(2), ms(3)])
    assert.deepStrictEqual(wholeMilliseconds([ms(5, 0), ms(5, 1), ms(5, 2)], 2), [ms(5, 0), ms(5, 1)])
  })
})
