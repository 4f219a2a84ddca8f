import {
  type AccountId,
  AccountStore,
  cachedAccountStore,
  decodeLineProtocol,
  defaultLimits,
  digestAccessKey,
  type IngestRequest,
  InvalidPoint,
  type PointOp,
  type StreamName,
  StreamStore,
  UseCases,
  type WidgetType
} from "@dashstream/core"
import { MemoryStore } from "@dashstream/core/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"

/**
 * `UseCases.ingest` and `ingestDirect` store any protocol's `IngestRequest`: a toy protocol whose part
 * content is a number, decoded by the request's one decoder, checks the steps every protocol shares.
 */

const KEY = "ds_key-ingest"
const NOW = 1_700_000_000_000_000

/** A toy protocol: each part's value is a number; `-1` is refused, at the part's path. */
const decodeToy = (type: WidgetType, value: number, path: string): Either.Either<PointOp, InvalidPoint> =>
  value < 0
    ? Either.left(new InvalidPoint({ message: `${type} refuses ${value}`, path }))
    : Either.right({ _tag: "Put", entries: [{ point: { number: value } }] })

const request = (
  parts: ReadonlyArray<readonly [string, number]>,
  undeclared: "reject" | "skip",
  accessKey = KEY
): IngestRequest<number> => ({
  accessKey,
  parts: parts.map(([streamName, value], i) => ({ streamName, path: `line ${i + 1}`, value })),
  undeclared,
  decode: decodeToy,
  streamNamePath: (path) => `${path} (stream)`
})

const outcome = (error: unknown): string => {
  const e = error as { _tag: string; message?: string; path?: string }
  return `${e._tag}|${e.message ?? ""}|${e.path ?? ""}`
}

const fixtureWith = (ttlMillis: number) =>
  Effect.gen(function* () {
    const { accountStore, streamStore } = yield* MemoryStore.make
    // Without the memory store's synchronous lookups, as on PostgreSQL: the direct path needs the cache.
    const accounts = cachedAccountStore(
      { ...accountStore, peekAccount: () => undefined, peekWidget: () => undefined },
      { ttlMillis, maxEntries: 1000 }
    )
    const streams = streamStore
    const id = "acc-ingest" as AccountId
    yield* accountStore.createAccount({ id, name: "a", createdAt: 0 }, digestAccessKey(KEY))
    for (const name of ["a", "b"]) yield* accountStore.createWidget(id, name as StreamName, "sparkline", 0)
    const run = <A, E>(effect: Effect.Effect<A, E, AccountStore | StreamStore>) =>
      effect.pipe(Effect.provideService(AccountStore, accounts), Effect.provideService(StreamStore, streams))
    const viaEffect = (r: IngestRequest<unknown>) =>
      run(UseCases.ingest(r, defaultLimits, NOW as never)).pipe(
        Effect.match({ onSuccess: (result) => `ok|skipped ${result.skipped}`, onFailure: outcome })
      )
    const viaDirect = (r: IngestRequest<unknown>): Effect.Effect<{ outcome: string; direct: boolean }> =>
      Effect.async((resume) => {
        const direct = UseCases.ingestDirect(
          r,
          defaultLimits,
          accounts,
          streams,
          (error, skipped) =>
            resume(
              Effect.succeed({
                outcome: error === undefined ? `ok|skipped ${skipped ?? 0}` : outcome(error),
                direct: true
              })
            ),
          NOW as never
        )
        if (!direct) resume(Effect.map(viaEffect(r), (o) => ({ outcome: o, direct: false })))
      })
    const numbers = (name: string) =>
      Effect.map(run(UseCases.read(KEY, name, { since: "0" })), (entries) =>
        entries.map((e) => (JSON.parse(e.json) as { number: number }).number)
      )
    return { viaEffect, viaDirect, numbers, id, accountStore, accounts }
  })

const fixture = fixtureWith(60_000)

describe("UseCases.ingest", () => {
  it.effect("stores every part, in order, in one write, through the request's decoder", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      assert.strictEqual(
        yield* f.viaEffect(
          request(
            [
              ["a", 1],
              ["b", 2],
              ["a", 3]
            ],
            "reject"
          )
        ),
        "ok|skipped 0"
      )
      assert.deepStrictEqual(yield* f.numbers("a"), [1, 3])
      assert.deepStrictEqual(yield* f.numbers("b"), [2])
    })
  )

  it.effect("skips and counts undeclared streams with undeclared: skip", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const r = request(
        [
          ["a", 1],
          ["nope", 2],
          ["x/y", 3],
          ["b", 4]
        ],
        "skip"
      )
      assert.strictEqual(yield* f.viaEffect(r), "ok|skipped 2")
      assert.deepStrictEqual(yield* f.numbers("a"), [1])
      assert.deepStrictEqual(yield* f.numbers("b"), [4])
      // Only undeclared streams: nothing to write, still a success.
      assert.strictEqual(yield* f.viaEffect(request([["nope", 1]], "skip")), "ok|skipped 1")
    })
  )

  it.effect("refuses an undeclared stream with undeclared: reject, at the request's stream path", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const r = request(
        [
          ["a", 1],
          ["nope", 2]
        ],
        "reject"
      )
      assert.strictEqual(
        yield* f.viaEffect(r),
        'StreamNotFound|no widget with stream name "nope" in this account|line 2 (stream)'
      )
      assert.deepStrictEqual(yield* f.numbers("a"), [])
      const { streamNamePath: _, ...noPath } = r
      assert.strictEqual(
        yield* f.viaEffect(noPath),
        'StreamNotFound|no widget with stream name "nope" in this account|'
      )
    })
  )

  it.effect("is all or nothing: a refused part stores nothing, skipped parts included", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const r = request(
        [
          ["a", 1],
          ["nope", 5],
          ["b", -1]
        ],
        "skip"
      )
      assert.strictEqual(yield* f.viaEffect(r), "InvalidPoint|sparkline refuses -1|line 3")
      assert.deepStrictEqual(yield* f.numbers("a"), [])
    })
  )

  it.effect("refuses an empty or unknown key with Forbidden before looking at the streams", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      for (const key of ["", "ds_nobody"]) {
        assert.match(yield* f.viaEffect(request([["nope", 1]], "reject", key)), /^Forbidden\|/)
      }
    })
  )

  it.effect("ingestDirect answers what ingest does, and declines what is not at hand", () =>
    Effect.gen(function* () {
      const a = yield* fixture
      const b = yield* fixture
      const requests = [
        request([["a", 1]], "reject"),
        request([["a", 2]], "reject"),
        request(
          [
            ["a", 3],
            ["b", 4],
            ["a", 5]
          ],
          "reject"
        ),
        request(
          [
            ["a", 3],
            ["b", 4],
            ["a", 5]
          ],
          "reject"
        ),
        request(
          [
            ["a", 6],
            ["b", -1]
          ],
          "reject"
        ),
        request([["a", -1]], "skip"),
        request(
          [
            ["a", 7],
            ["nope", 1]
          ],
          "skip"
        ),
        request([["nope", 1]], "reject"),
        request([["a", 1]], "reject", "ds_nobody")
      ]
      const directs: Array<boolean> = []
      for (const r of requests) {
        const expected = yield* a.viaEffect(r)
        const got = yield* b.viaDirect(r)
        assert.strictEqual(got.outcome, expected)
        directs.push(got.direct)
      }
      // Cached after the first push of a stream, found or absent ("nope", looked up by the request before); an unknown
      // key is never at hand.
      assert.deepStrictEqual(directs, [false, true, false, true, true, true, false, true, false])
      assert.deepStrictEqual(yield* b.numbers("a"), yield* a.numbers("a"))
      assert.deepStrictEqual(yield* b.numbers("b"), yield* a.numbers("b"))
    })
  )

  describe("a line protocol batch (docs/api.md section 13.1: undeclared streams are skipped)", () => {
    const T = 1_700_000_000_000_000_000n
    const batch = (i: number) =>
      Either.getOrThrow(
        decodeLineProtocol(
          [
            `cpu,host=web1 usage=${i},idle=${i + 1} ${T + BigInt(i) * 1_000_000_000n}`,
            `cpu,host=web2 usage=${i + 2},idle=${i + 3} ${T + BigInt(i) * 1_000_000_000n}`
          ].join("\n"),
          KEY,
          "ns"
        )
      )
    const declare = (f: Effect.Effect.Success<typeof fixture>, via: "cache" | "elsewhere", name: string) =>
      (via === "cache" ? f.accounts : f.accountStore).createWidget(f.id, name as StreamName, "number", 0)

    it.effect("takes the direct path once the cache knows every name, found or absent", () =>
      Effect.gen(function* () {
        const f = yield* fixture
        yield* declare(f, "cache", "cpu.usage{host=web1}")
        assert.deepStrictEqual(yield* f.viaDirect(batch(1)), { outcome: "ok|skipped 3", direct: false })
        assert.deepStrictEqual(yield* f.viaDirect(batch(2)), { outcome: "ok|skipped 3", direct: true })
        assert.deepStrictEqual(yield* f.viaDirect(batch(3)), { outcome: "ok|skipped 3", direct: true })
        assert.deepStrictEqual(yield* f.numbers("cpu.usage{host=web1}"), [1, 2, 3])
      })
    )

    it.effect("a widget created through the cache is written at once", () =>
      Effect.gen(function* () {
        const f = yield* fixture
        yield* declare(f, "cache", "cpu.usage{host=web1}")
        yield* f.viaDirect(batch(1))
        assert.isTrue((yield* f.viaDirect(batch(2))).direct)
        yield* declare(f, "cache", "cpu.idle{host=web2}")
        assert.strictEqual((yield* f.viaDirect(batch(3))).outcome, "ok|skipped 2")
        assert.deepStrictEqual(yield* f.viaDirect(batch(4)), { outcome: "ok|skipped 2", direct: true })
        assert.deepStrictEqual(yield* f.numbers("cpu.idle{host=web2}"), [6, 7])
      })
    )

    it.effect("a widget created elsewhere is written once the TTL has passed", () =>
      Effect.gen(function* () {
        const f = yield* fixtureWith(100)
        yield* declare(f, "cache", "cpu.usage{host=web1}")
        yield* f.viaDirect(batch(1))
        yield* declare(f, "elsewhere", "cpu.idle{host=web2}")
        // Still remembered absent here: skipped, from memory.
        assert.deepStrictEqual(yield* f.viaDirect(batch(2)), { outcome: "ok|skipped 3", direct: true })
        yield* Effect.promise(() => new Promise((r) => setTimeout(r, 150)))
        assert.strictEqual((yield* f.viaDirect(batch(3))).outcome, "ok|skipped 2")
        assert.deepStrictEqual(yield* f.numbers("cpu.idle{host=web2}"), [6])
      })
    )

    it.effect("the original push still refuses an undeclared stream, remembered absent or not", () =>
      Effect.gen(function* () {
        const f = yield* fixture
        const r = request([["cpu.idle{host=web2}", 1]], "reject")
        yield* f.viaDirect(batch(1))
        const refused =
          'StreamNotFound|no widget with stream name "cpu.idle{host=web2}" in this account|line 1 (stream)'
        assert.deepStrictEqual(yield* f.viaDirect(r), { outcome: refused, direct: true })
        assert.strictEqual(yield* f.viaEffect(r), refused)
      })
    )
  })
})
