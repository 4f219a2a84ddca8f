import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
import { AccountId } from "../src/Account.js"
import type { Mutation } from "../src/Apply.js"
import { decodeLineProtocol } from "../src/ingest/LineProtocolRequest.js"
import type { IngestRequest } from "../src/Ingest.js"
import { defaultLimits } from "../src/Limits.js"
import type { StreamName } from "../src/StreamName.js"
import type { StreamWrite } from "../src/StreamStore.js"
import { micros } from "../src/Time.js"
import { writesOf } from "../src/usecases/Push.js"
import type { StreamId, Widget } from "../src/Widget.js"
import type { WidgetType } from "../src/WidgetType.js"
import { mergePuts, type StateSource, WritePlan } from "../src/WritePlan.js"

/**
 * The line protocol path's writes (`writesOf` with the request's `decodeEntry`: one entry per field, merged per
 * stream as the fields come) against the path it replaced: one `decode`d one-entry `Put` per field, then
 * `mergePuts`. Same writes, same skipped count, same first error, and the same mutations once planned.
 */

const NOW = 1_800_000_000_000_000

// What a stream name of the body is to the account: undeclared (skipped), or a widget of a type (`image` cannot be
// written by line protocol: refused).
const declared = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.constantFrom<WidgetType | null>(null, "number", "sparkline", "line-graph", "label", "text-feed")
  },
  { weight: 1, arbitrary: fc.constant<WidgetType>("image") }
)

const fieldValue = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -1000, max: 1000 }).map((n) => `${n}i`) },
  { weight: 6, arbitrary: fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }).map((n) => `${n}`) },
  { weight: 2, arbitrary: fc.constantFrom("t", "false") },
  { weight: 1, arbitrary: fc.constantFrom('"up"', '"a b"') }
)

const line = fc.record({
  measurement: fc.constantFrom("cpu", "mem"),
  host: fc.option(fc.constantFrom("a", "b"), { nil: undefined }),
  fields: fc.array(fc.tuple(fc.constantFrom("x", "y", "z"), fieldValue), { minLength: 1, maxLength: 3 }),
  // Seconds: repeated and going back now and then, or none (the server's ts).
  ts: fc.option(fc.integer({ min: 1_700_000_000, max: 1_700_000_006 }), { nil: undefined })
})

const bodyOf = (lines: ReadonlyArray<typeof line extends fc.Arbitrary<infer L> ? L : never>): string =>
  lines
    .map((l) => {
      const fields = new Map(l.fields)
      const series = l.host === undefined ? l.measurement : `${l.measurement},host=${l.host}`
      const values = [...fields].map(([k, v]) => `${k}=${v}`).join(",")
      return l.ts === undefined ? `${series} ${values}` : `${series} ${values} ${l.ts}`
    })
    .join("\n")

// The path before `decodeEntry`: one decoded write per declared part, then `mergePuts`.
const oldWrites = (request: IngestRequest, widgets: ReadonlyMap<string, Widget | null>) => {
  const writes: Array<StreamWrite> = []
  for (const part of request.parts) {
    const widget = widgets.get(part.streamName)
    if (widget == null) continue
    const op = request.decode(widget.type, part.value, part.path, defaultLimits)
    if (Either.isLeft(op)) return Either.left(op.left)
    writes.push({ widget, op: op.right, path: part.path })
  }
  return Either.right({ writes: mergePuts(writes), written: writes.length })
}

const planned = (writes: ReadonlyArray<StreamWrite>, lastTs: (stream: StreamId) => number | null) => {
  const source: StateSource = { lastTs: (s) => lastTs(s) as never, latest: () => null }
  const plan = new WritePlan(source)
  const error = plan.add(writes, micros(NOW))
  const mutations: Array<[StreamId, Mutation]> = []
  for (let i = 0; i < plan.size; i++) mutations.push([plan.streamAt(i), plan.mutation(i)])
  return { error: error && [error._tag, error.message, error.path], mutations }
}

describe("line protocol writes", () => {
  it("property: decodeEntry merged as it comes gives what decode + mergePuts gave, before and after the plan", () => {
    let merged = 0
    let refused = 0
    let split = 0
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 40 }),
        fc.array(declared, { minLength: 12, maxLength: 12 }),
        fc.array(fc.option(fc.integer({ min: 1_700_000_003, max: 1_700_000_004 }), { nil: null }), {
          minLength: 12,
          maxLength: 12
        }),
        (lines, types, lastSeconds) => {
          const decoded = decodeLineProtocol(bodyOf(lines), "key", "s")
          if (Either.isLeft(decoded)) throw new Error(decoded.left.message)
          const request = decoded.right
          assert.isDefined(request.decodeEntry)
          const widgets = new Map<string, Widget | null>()
          for (const part of request.parts) {
            if (widgets.has(part.streamName)) continue
            const n = widgets.size
            const type = types[n % types.length]!
            widgets.set(
              part.streamName,
              type === null
                ? null
                : {
                    id: (n + 1) as StreamId,
                    accountId: AccountId.make("acct"),
                    streamName: part.streamName as StreamName,
                    type,
                    createdAt: 0
                  }
            )
          }
          const lastTs = (s: StreamId) => {
            const sec = lastSeconds[(s - 1) % lastSeconds.length]!
            return sec === null ? null : sec * 1_000_000
          }
          const before = oldWrites(request, widgets)
          const after = writesOf(request, widgets, defaultLimits)
          if (Either.isLeft(before) || Either.isLeft(after)) {
            refused++
            const shown = (e: Either.Either<unknown, { _tag: string; message: string; path?: string | undefined }>) =>
              Either.isLeft(e) ? [e.left._tag, e.left.message, e.left.path] : undefined
            assert.deepStrictEqual(shown(after), shown(before), "the same first error")
            assert.isTrue(Either.isLeft(before) && Either.isLeft(after), "both refuse")
            return
          }
          assert.isTrue(after.right.merged)
          assert.strictEqual(after.right.written, before.right.written, "the same parts written (and skipped)")
          assert.deepStrictEqual(after.right.writes, before.right.writes)
          if (before.right.writes.length < before.right.written) merged++
          if (new Set(before.right.writes.map((w) => w.widget.id)).size < before.right.writes.length) split++
          assert.deepStrictEqual(planned(after.right.writes, lastTs), planned(before.right.writes, lastTs))
        }
      ),
      { numRuns: 1000 }
    )
    assert.isAbove(merged, 100, "the property saw merged writes")
    assert.isAbove(split, 20, "the property saw a stream's entries in more than one write")
    assert.isAbove(refused, 50, "the property saw refused bodies")
  })
})
