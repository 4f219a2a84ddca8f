import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import type { AccountId } from "../src/Account.js"
import { micros } from "../src/Time.js"
import { type LineBatch, parseLineProtocol } from "../src/ingest/LineProtocol.js"
import { lineProtocolStreamNames, lineProtocolWrites } from "../src/ingest/LineProtocolWrites.js"
import type { StreamName } from "../src/StreamName.js"
import type { StreamId, Widget } from "../src/Widget.js"
import { type WidgetType, widgetTypes } from "../src/WidgetType.js"

const batchOf = (body: string): LineBatch => {
  const result = parseLineProtocol(body, { precision: "s", maxFieldValues: 100_000 })
  if (Either.isLeft(result)) assert.fail(result.left.message)
  return result.right
}

const widget = (id: number, streamName: string, type: WidgetType): Widget => ({
  id: id as StreamId,
  accountId: "acc" as AccountId,
  streamName: streamName as StreamName,
  type,
  createdAt: 0
})

/** A lookup over `widgets` that records the names it was asked. */
const lookup = (widgets: ReadonlyArray<Widget>) => {
  const asked: Array<string> = []
  const byName = new Map(widgets.map((w) => [w.streamName as string, w]))
  return {
    asked,
    widgetOf: (name: string) => {
      asked.push(name)
      return byName.get(name)
    }
  }
}

describe("lineProtocolWrites", () => {
  it("writes numbers with the line's timestamp to the number family, in body order, one write per stream", () => {
    const types: Array<WidgetType> = ["number", "horizontal-bar", "vertical-bar", "dial", "sparkline", "line-graph"]
    for (const type of types) {
      const cpu = widget(1, "cpu.usage_idle{cpu=cpu0,host=web1}", type)
      const mem = widget(2, "mem.used", type)
      const { widgetOf } = lookup([cpu, mem])
      const body = [
        "cpu,host=web1,cpu=cpu0 usage_idle=97.5,usage_user=1 1700000000",
        "mem used=12i,free=3i",
        "cpu,cpu=cpu0,host=web1 usage_idle=t 1700000001",
        "mem used=f 1700000002",
        "cpu,host=web1,cpu=cpu0 usage_idle=18446744073709551615u 1700000001"
      ].join("\n")
      const result = lineProtocolWrites(batchOf(body), widgetOf)
      assert.deepStrictEqual(
        result,
        Either.right({
          writes: [
            {
              widget: cpu,
              op: {
                _tag: "Put",
                entries: [
                  { point: { number: 97.5 }, ts: micros(1_700_000_000_000_000) },
                  { point: { number: 1 }, ts: micros(1_700_000_001_000_000) },
                  { point: { number: 18446744073709551615 }, ts: micros(1_700_000_001_000_000) }
                ]
              },
              path: "line 1"
            },
            {
              widget: mem,
              op: {
                _tag: "Put",
                entries: [{ point: { number: 12 } }, { point: { number: 0 }, ts: micros(1_700_000_002_000_000) }]
              },
              path: "line 2"
            }
          ],
          // usage_user and free
          skipped: 2
        }),
        type
      )
    }
  })

  it("writes a label's value as text and a text feed's field key and value, at the server's ts", () => {
    const label = widget(1, "app.status{host=a}", "label")
    const feed = widget(2, "app.event", "text-feed")
    const body = 'app,host=a status="up \\"ok\\"" 1700000000\napp status=1e3,event=12i\napp event=true,event="deployed"'
    const result = lineProtocolWrites(batchOf(body), lookup([label, feed]).widgetOf)
    assert.deepStrictEqual(
      result,
      Either.right({
        writes: [
          { widget: label, op: { _tag: "Put", entries: [{ point: { label: 'up "ok"' } }] }, path: "line 1" },
          {
            widget: feed,
            op: {
              _tag: "Put",
              entries: [
                { point: { title: "event", msg: "12" } },
                { point: { title: "event", msg: "true" } },
                { point: { title: "event", msg: "deployed" } }
              ]
            },
            path: "line 2"
          }
        ],
        // app.status (no tags) is not declared
        skipped: 1
      })
    )
  })

  it("counts every field value of an undeclared stream as skipped, and asks for each name once", () => {
    const { asked, widgetOf } = lookup([])
    const result = lineProtocolWrites(batchOf("a x=1,y=2\na x=3\nb z=4\n"), widgetOf)
    assert.deepStrictEqual(result, Either.right({ writes: [], skipped: 4 }))
    assert.deepStrictEqual(asked, ["a.x", "a.y", "b.z"])
  })

  it("does not look up a name that cannot be a stream name (section 2), and skips it", () => {
    const { asked, widgetOf } = lookup([])
    const long = "m".repeat(300)
    const batch = batchOf(`${long} v=1\nm,path=a/b v=2\nm\\\tx v=3\n`)
    assert.deepStrictEqual(lineProtocolWrites(batch, widgetOf), Either.right({ writes: [], skipped: 3 }))
    assert.deepStrictEqual(asked, [])
    assert.deepStrictEqual(lineProtocolStreamNames(batch), [])
    assert.deepStrictEqual(lineProtocolStreamNames(batchOf("a x=1,y=2\na x=3,y=4\nb x=5")), ["a.x", "a.y", "b.x"])
  })

  it("refuses a string on a numeric stream, naming the line, the field, the stream and its type", () => {
    const dial = widget(1, "m.v", "dial")
    const result = lineProtocolWrites(batchOf('# c\nm v=1\nm v="high"'), lookup([dial]).widgetOf)
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result)) {
      assert.strictEqual(result.left._tag, "InvalidPoint")
      assert.strictEqual(
        result.left.message,
        'line 3: field "v" is a string, but stream "m.v" is a dial widget, which takes numbers'
      )
    }
  })

  it("refuses every other widget type, naming the line, the stream and its type", () => {
    const writable = new Set([
      "number",
      "horizontal-bar",
      "vertical-bar",
      "dial",
      "sparkline",
      "line-graph",
      "label",
      "text-feed"
    ])
    for (const type of widgetTypes.filter((t) => !writable.has(t))) {
      const result = lineProtocolWrites(batchOf("\nm v=1"), lookup([widget(1, "m.v", type)]).widgetOf)
      assert.isTrue(Either.isLeft(result), type)
      if (Either.isLeft(result)) {
        assert.strictEqual(result.left._tag, "InvalidPoint")
        assert.match(
          result.left.message,
          new RegExp(`^line 2: stream "m.v" is a ${type} widget, which line protocol cannot write`)
        )
      }
    }
  })
})
