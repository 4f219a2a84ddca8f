import {
  type AccountId,
  AccountStore,
  decodeLineProtocol,
  defaultLimits,
  digestAccessKey,
  type IngestRequest,
  lineProtocolWidgetTypes,
  type Precision,
  type StreamName,
  StreamStore,
  UseCases,
  type WidgetType,
  widgetTypes
} from "@dashstream/core"
import { MemoryStore } from "@dashstream/core/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"

/**
 * A line protocol write as an `IngestRequest` (docs/api.md section 13.1), stored through `UseCases.ingest` into the
 * memory store: the value mapping by widget type, skipped streams, all or nothing, retries.
 */

const KEY = "ds_key-lineprotocol"
const NOW = 1_800_000_000_000_000

const requestOf = (body: string, precision: Precision = "s", accessKey = KEY): IngestRequest<number> => {
  const decoded = decodeLineProtocol(body, accessKey, precision)
  if (Either.isLeft(decoded)) assert.fail(decoded.left.message)
  return decoded.right
}

const outcome = (error: unknown): string => {
  const e = error as { _tag: string; message?: string; path?: string }
  return `${e._tag}|${e.message ?? ""}|${e.path ?? ""}`
}

/** An account with `widgets` ([stream name, type]); `write` ingests a body, `entries` reads a stream back. */
const fixture = (widgets: ReadonlyArray<readonly [string, WidgetType]>) =>
  Effect.gen(function* () {
    const { accountStore, streamStore } = yield* MemoryStore.make
    const id = "acc-lp" as AccountId
    yield* accountStore.createAccount({ id, name: "a", createdAt: 0 }, digestAccessKey(KEY))
    for (const [name, type] of widgets) yield* accountStore.createWidget(id, name as StreamName, type, 0)
    const run = <A, E>(effect: Effect.Effect<A, E, AccountStore | StreamStore>) =>
      effect.pipe(Effect.provideService(AccountStore, accountStore), Effect.provideService(StreamStore, streamStore))
    const write = (body: string, precision: Precision = "s", now = NOW) =>
      run(UseCases.ingest(requestOf(body, precision), defaultLimits, now as never)).pipe(
        Effect.match({ onSuccess: (result) => `ok|skipped ${result.skipped}`, onFailure: outcome })
      )
    const entries = (name: string) =>
      Effect.map(run(UseCases.read(KEY, name, { since: "0" })), (found) =>
        found.map((e): [number, unknown] => [e.ts, JSON.parse(e.json)])
      )
    return { write, entries, run }
  })

describe("decodeLineProtocol", () => {
  it("makes one part per field value, in body order, at path line N, its value the field's index", () => {
    const request = requestOf("# c\ncpu,host=a v=1,w=2\n\nmem x=3")
    assert.strictEqual(request.accessKey, KEY)
    assert.strictEqual(request.undeclared, "skip")
    assert.deepStrictEqual(
      request.parts.map((p) => [p.streamName, p.path, p.value]),
      [
        ["cpu.v{host=a}", "line 2", 0],
        ["cpu.w{host=a}", "line 2", 1],
        ["mem.x", "line 4", 2]
      ]
    )
  })

  it("refuses a malformed body with InvalidRequest at its line, and too many field values with PayloadTooLarge", () => {
    const bad = decodeLineProtocol("a v=1\nb v=\n", KEY, "ns")
    assert.isTrue(Either.isLeft(bad))
    if (Either.isLeft(bad))
      assert.strictEqual(outcome(bad.left), 'InvalidRequest|line 2: field "v" has no value in "b v="|line 2')
    // 100,000 field values (skipped ones included) are accepted, one more is 413.
    const line = `m ${Array.from({ length: 1000 }, (_, i) => `f${i}=1`).join(",")}`
    const limit = Array.from({ length: 100 }, () => line).join("\n")
    assert.strictEqual(Either.getOrThrow(decodeLineProtocol(limit, KEY, "ns")).parts.length, 100_000)
    const tooLarge = decodeLineProtocol(`${limit}\nm one_more=1`, KEY, "ns")
    assert.isTrue(Either.isLeft(tooLarge) && tooLarge.left._tag === "PayloadTooLarge")
  })
})

describe("LineProtocolRequest entries", () => {
  it("carry each number's point, ts and JSON, the JSON set by decoded(), even for a request decoded twice", () => {
    const body = ["m a=1.5,b=2i,c=1e3,d=t 1000", "m a=-0.25 2000", "n x=7", 'm a=3,s="no"'].join("\n")
    const request = requestOf(body)
    const decodeAll = (keep: (i: number) => boolean) =>
      request.parts.flatMap((part) => {
        if (!keep(part.value) || part.streamName === "m.s") return []
        const entry = request.decodeEntry!("sparkline", part.value, part.path, defaultLimits)
        if ("_tag" in entry) assert.fail(entry.message)
        return [entry]
      })
    const expected = (entries: ReadonlyArray<{ point: unknown; ts?: number | undefined; json?: string | undefined }>) =>
      entries.map((e) => [e.point, e.ts, e.json])
    const first = decodeAll(() => true)
    // Before decoded(): no JSON yet (applyOp would serialise the point).
    assert.deepStrictEqual(
      first.map((e) => e.json),
      first.map(() => undefined)
    )
    request.decoded!()
    const want = [
      [{ number: 1.5 }, 1_000_000_000, '{"number":1.5}'],
      [{ number: 2 }, 1_000_000_000, '{"number":2}'],
      [{ number: 1000 }, 1_000_000_000, undefined],
      [{ number: 1 }, 1_000_000_000, undefined],
      [{ number: -0.25 }, 2_000_000_000, '{"number":-0.25}'],
      [{ number: 7 }, undefined, '{"number":7}'],
      [{ number: 3 }, undefined, '{"number":3}']
    ]
    assert.deepStrictEqual(expected(first), want)
    // Decoded again (fewer parts): the first entries keep their JSON, the new ones get theirs.
    const second = decodeAll((i) => i % 2 === 1)
    request.decoded!()
    assert.deepStrictEqual(expected(first), want)
    assert.deepStrictEqual(
      expected(second),
      want.filter((_, k) => [1, 3, 5].includes(k))
    )
  })
})

describe("decodeLineProtocol on hostile bodies stays linear", () => {
  // A 10 MiB body is accepted; no line of it may cost more than time in proportion to its size.
  it("a line with 300,000 tags in reverse order", () => {
    const tags = Array.from({ length: 300_000 }, (_, i) => `,t${(300_000 - i).toString(36)}=v`).join("")
    const start = performance.now()
    const request = Either.getOrThrow(decodeLineProtocol(`m${tags} f=1`, KEY, "ns"))
    assert.strictEqual(request.parts.length, 1)
    assert.isBelow(performance.now() - start, 5_000)
  })

  it("a line whose tags make every stream name megabytes long, with 20,000 fields", () => {
    const tags = Array.from({ length: 200_000 }, (_, i) => `,t${i.toString(36).padStart(4, "0")}=v`).join("")
    const fields = Array.from({ length: 20_000 }, (_, i) => `f${i}=1`).join(",")
    const start = performance.now()
    const request = Either.getOrThrow(decodeLineProtocol(`m${tags} ${fields}`, KEY, "ns"))
    // What UseCases.ingest does with the names: a set of them (none can be a stream name: all are skipped).
    const names = new Set(request.parts.map((p) => p.streamName))
    assert.strictEqual(request.parts.length, 20_000)
    assert.isAtLeast(names.size, 1)
    assert.isBelow(performance.now() - start, 5_000)
  })
})

describe("line protocol through UseCases.ingest (docs/api.md section 13.1)", () => {
  it.effect("stores numbers with the line's timestamp on the number family; booleans as 1 and 0", () =>
    Effect.gen(function* () {
      const types: Array<WidgetType> = ["number", "horizontal-bar", "vertical-bar", "dial", "sparkline", "line-graph"]
      for (const type of types) {
        const f = yield* fixture([
          ["cpu.usage_idle{cpu=cpu0,host=web1}", type],
          ["mem.used", type]
        ])
        const body = [
          "cpu,host=web1,cpu=cpu0 usage_idle=97.5,usage_user=1 1700000000",
          "mem used=12i,free=3i",
          "cpu,cpu=cpu0,host=web1 usage_idle=t 1700000001",
          "mem used=F 1700000002"
        ].join("\n")
        assert.strictEqual(yield* f.write(body), "ok|skipped 2", type)
        assert.deepStrictEqual(
          yield* f.entries("cpu.usage_idle{cpu=cpu0,host=web1}"),
          [
            [1_700_000_000_000_000, { number: 97.5 }],
            [1_700_000_001_000_000, { number: 1 }]
          ],
          type
        )
        // The line without a timestamp takes the server's ts.
        assert.deepStrictEqual(
          yield* f.entries("mem.used"),
          [
            [1_700_000_002_000_000, { number: 0 }],
            [NOW, { number: 12 }]
          ],
          type
        )
      }
    })
  )

  it.effect("stores a label's value as text, a text feed's field key and value, at the server's ts", () =>
    Effect.gen(function* () {
      const f = yield* fixture([
        ["app.status{host=a}", "label"],
        ["app.event", "text-feed"]
      ])
      const body =
        'app,host=a status="up \\"ok\\"" 1700000000\napp status=1e3,event=12i\napp event=true,event="deployed"'
      assert.strictEqual(yield* f.write(body), "ok|skipped 1")
      assert.deepStrictEqual(yield* f.entries("app.status{host=a}"), [[NOW, { label: 'up "ok"' }]])
      assert.deepStrictEqual(yield* f.entries("app.event"), [
        [NOW, { title: "event", msg: "12" }],
        [NOW + 1, { title: "event", msg: "true" }],
        [NOW + 2, { title: "event", msg: "deployed" }]
      ])
    })
  )

  it.effect("a retried batch with timestamps stores nothing twice; the later of two equal timestamps wins", () =>
    Effect.gen(function* () {
      const f = yield* fixture([["m.v", "line-graph"]])
      const body = "m v=1 1700000000\nm v=2 1700000001\nm v=3 1700000001"
      assert.strictEqual(yield* f.write(body), "ok|skipped 0")
      assert.strictEqual(yield* f.write(body, "s", NOW + 5_000_000), "ok|skipped 0")
      assert.deepStrictEqual(yield* f.entries("m.v"), [
        [1_700_000_000_000_000, { number: 1 }],
        [1_700_000_001_000_000, { number: 3 }]
      ])
    })
  )

  it.effect("counts every field value of an undeclared stream as skipped, and names those streams", () =>
    Effect.gen(function* () {
      const f = yield* fixture([])
      assert.strictEqual(yield* f.write("a x=1,y=2\na x=3\nb z=4\n"), "ok|skipped 4")
      assert.strictEqual(yield* f.write("# nothing\n"), "ok|skipped 0")
      // The account and the names of the skipped streams, each once, for serve --log-skipped.
      const g = yield* fixture([["a.y", "number"]])
      const result = yield* g.run(UseCases.ingest(requestOf("a x=1,y=2\na x=3\nb z=4\n"), defaultLimits))
      assert.strictEqual(result.skipped, 3)
      assert.deepStrictEqual(result.skippedStreams?.(), { accountId: "acc-lp" as AccountId, names: ["a.x", "b.z"] })
    })
  )

  it.effect("is all or nothing: a string on a numeric stream stores nothing, naming the line, stream and type", () =>
    Effect.gen(function* () {
      const f = yield* fixture([
        ["m.v", "dial"],
        ["m.w", "number"]
      ])
      assert.strictEqual(
        yield* f.write('# c\nm v=1,w=2\nm v="high"'),
        'InvalidPoint|line 3: field "v" is a string, but stream "m.v" is a dial widget, which takes numbers|line 3'
      )
      assert.deepStrictEqual(yield* f.entries("m.v"), [])
      assert.deepStrictEqual(yield* f.entries("m.w"), [])
    })
  )

  it.effect("refuses every other widget type, naming the line, the stream and its type, and stores nothing", () =>
    Effect.gen(function* () {
      for (const type of widgetTypes.filter((t) => !lineProtocolWidgetTypes.includes(t))) {
        const f = yield* fixture([
          ["m.v", type],
          ["m.n", "number"]
        ])
        const result = yield* f.write("m n=1\n\nm v=1")
        assert.match(
          result,
          new RegExp(
            `^InvalidPoint\\|line 3: stream "m.v" is a ${type} widget, which line protocol cannot write .*\\|line 3$`
          )
        )
        assert.deepStrictEqual(yield* f.entries("m.n"), [])
      }
    })
  )

  it.effect("refuses a missing or unknown key with Forbidden", () =>
    Effect.gen(function* () {
      const f = yield* fixture([["m.v", "number"]])
      for (const key of ["", "ds_nobody"]) {
        const result = yield* f
          .run(UseCases.ingest(requestOf("m v=1", "s", key), defaultLimits))
          .pipe(Effect.match({ onSuccess: () => "ok", onFailure: outcome }))
        assert.match(result, /^Forbidden\|/)
      }
    })
  )
})
