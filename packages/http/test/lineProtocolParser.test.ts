import { gzipSync } from "node:zlib"
import { assert, describe, it } from "@effect/vitest"
import { lineProtocolLimits, type Precision } from "@dashstream/core"
import { Either } from "effect"
import { LineProtocolParser, type ParsedLines } from "../src/internal/lineProtocolParser.js"

/** Bodies parsed on the line protocol thread give what the event loop's parse gives (issue 26, contract 13.1). */

/** What a parse answered, comparable: every write through the batch's API, or the refusal's tag, message and path. */
const answer = (parsed: ParsedLines) =>
  Either.isLeft(parsed)
    ? { refused: [parsed.left._tag, parsed.left.message, parsed.left.path] }
    : {
        writes: Array.from({ length: parsed.right.size }, (_, i) => [
          parsed.right.streams[i],
          parsed.right.fieldKeys[i],
          parsed.right.kinds[i],
          parsed.right.numbers[i],
          parsed.right.text(i),
          parsed.right.timestamp(i),
          parsed.right.lines[i],
          parsed.right.numberJson(i)
        ])
      }

const parseWith = (parser: LineProtocolParser, bytes: Buffer, encoding?: string, precision: Precision = "ns") =>
  new Promise<ParsedLines>((resolve) => parser.parse(bytes, encoding, precision, resolve))

const lines = (n: number) =>
  Array.from(
    { length: n },
    (_, k) =>
      `cpu,cpu=cpu${k % 10},host=web1 usage_idle=${(k % 1000) / 10 + 0.25},n=${k}i ${1_700_000_000_000 + k}000000`
  ).join("\n")

/** Bodies with their `Content-Encoding` and precision: well-formed, gzip, and each way of being refused. */
const corpus = (): Array<[string, Buffer, string | undefined, Precision]> => {
  const lie = gzipSync("m v=1")
  lie.writeUInt32LE(lineProtocolLimits.maxBytes + 1, lie.length - 4)
  return [
    ["1,000 lines", Buffer.from(lines(1000)), undefined, "ns"],
    [
      "strings, booleans, no timestamps, a BOM",
      Buffer.from('\ufeffm,t=a s="x \\"y\\"",b=true,u=3u\nm v=1e3'),
      undefined,
      "ns"
    ],
    ["gzip, seconds", gzipSync(lines(50).replace(/000000$/gm, "")), "gzip", "s"],
    ["not gzip", Buffer.from("m v=1"), "gzip", "ns"],
    ["over the limit once inflated", lie, "x-gzip", "ns"],
    ["another encoding", Buffer.from("m v=1"), "br", "ns"],
    ["a line that does not parse", Buffer.from(`${lines(20)}\nm v=\n`), undefined, "ns"],
    [
      "more field values than allowed",
      Buffer.from(Array.from({ length: 10_001 }, (_, k) => `m ${"f=1,".repeat(9)}g=${k}`).join("\n")),
      undefined,
      "ns"
    ]
  ]
}

describe("LineProtocolParser", () => {
  it("answers on its thread exactly what the event loop answers, refusals included", async () => {
    const threaded = new LineProtocolParser({ threadMinBytes: 0 })
    const here = new LineProtocolParser({ threadMinBytes: Number.POSITIVE_INFINITY })
    try {
      assert.isTrue(await threaded.warmUp())
      for (const [name, bytes, encoding, precision] of corpus()) {
        const before = threaded.threadParses
        const expected = answer(await parseWith(here, bytes, encoding, precision))
        assert.deepStrictEqual(answer(await parseWith(threaded, bytes, encoding, precision)), expected, name)
        assert.strictEqual(threaded.threadParses, before + 1, `${name}: parsed on the thread`)
      }
      assert.strictEqual(here.threadParses, 0)
    } finally {
      await Promise.all([threaded.close(), here.close()])
    }
  })

  it("parses small bodies on the event loop, and large ones there too while many wait on the thread", async () => {
    const parser = new LineProtocolParser({ threadMinBytes: 1024 })
    try {
      assert.isTrue(await parser.warmUp())
      const small = answer(await parseWith(parser, Buffer.from("m v=1")))
      assert.strictEqual(parser.threadParses, 0)
      assert.deepStrictEqual(small.writes?.length, 1)
      // Many large bodies at once: the thread takes up to `maxWaiting` unparsed ones, the event loop parses the others
      // at once.
      const body = Buffer.from(lines(5_000))
      let answeredAtOnce = 0
      let sending = true
      const all = Array.from(
        { length: 3 * LineProtocolParser.maxWaiting },
        () =>
          new Promise<ReturnType<typeof answer>>((resolve) =>
            parser.parse(body, undefined, "ns", (parsed) => {
              if (sending) answeredAtOnce++
              resolve(answer(parsed))
            })
          )
      )
      sending = false
      // (The thread parses meanwhile, so it may take more than `maxWaiting` of them.)
      assert.isAtLeast(answeredAtOnce, 1, "parsed at once on the event loop")
      const results = await Promise.all(all)
      for (const result of results) assert.strictEqual(result.writes?.length, 10_000)
      assert.isAtLeast(parser.threadParses, LineProtocolParser.maxWaiting)
      assert.strictEqual(parser.threadParses + answeredAtOnce, all.length)
    } finally {
      await parser.close()
    }
  })

  it("parses the bodies waiting on a thread that died on the event loop, says so once, and every later one too", async () => {
    const failures: Array<Error> = []
    const parser = new LineProtocolParser({ threadMinBytes: 0, onThreadFailure: (error) => failures.push(error) })
    try {
      assert.isTrue(await parser.warmUp())
      const body = Buffer.from(lines(5_000))
      const expected = answer(await parseWith(new LineProtocolParser({ threadMinBytes: Infinity }), body))
      const waiting = Array.from({ length: 4 }, () => parseWith(parser, body))
      // The thread ends under them (as a crash would end it).
      await (parser as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate()
      for (const parsed of await Promise.all(waiting)) assert.deepStrictEqual(answer(parsed), expected)
      assert.strictEqual(failures.length, 1)
      assert.match(failures[0]!.message, /line protocol thread exited/)
      const parses = parser.threadParses
      assert.deepStrictEqual(answer(await parseWith(parser, body)), expected)
      assert.strictEqual(parser.threadParses, parses, "parsed on the event loop")
      assert.isFalse(await parser.warmUp())
    } finally {
      await parser.close()
    }
  })

  it("parses the bodies waiting at close on the event loop", async () => {
    const parser = new LineProtocolParser({ threadMinBytes: 0 })
    assert.isTrue(await parser.warmUp())
    const body = Buffer.from(lines(2_000))
    const waiting = Array.from({ length: 3 }, () => parseWith(parser, body))
    await parser.close()
    for (const parsed of await Promise.all(waiting)) assert.strictEqual(answer(parsed).writes?.length, 4_000)
  })
})
