/** What the parseLineProtocol suites (LineProtocol*.test.ts) share: parsing with assertions, reading a batch back. */
import { assert } from "@effect/vitest"
import { Either } from "effect"
import { type LineBatch, parseLineProtocol, type Precision } from "../src/ingest/LineProtocol.js"
import { MAX_SECONDS, MICROS_PER_SECOND } from "../src/Time.js"

/** The latest timestamp, in microseconds. */
export const MAX_MICROS = MAX_SECONDS * MICROS_PER_SECOND

/** Parses `body` with `precision`, at most `maxFieldValues` field values. */
export const parse = (body: string, precision: Precision = "ns", maxFieldValues = 100_000) =>
  parseLineProtocol(body, { precision, maxFieldValues })

/** The batch `body` parses to; fails the test when it is refused. */
export const ok = (body: string, precision: Precision = "ns"): LineBatch => {
  const result = parse(body, precision)
  if (Either.isLeft(result)) assert.fail(`${JSON.stringify(body)}: ${result.left.message}`)
  return result.right
}

/** Each write as [stream, field key, kind, number, text, timestamp, line]. */
export const writes = (batch: LineBatch) =>
  Array.from({ length: batch.size }, (_, i) => [
    batch.streams[i],
    batch.fieldKeys[i],
    batch.kinds[i],
    batch.numbers[i],
    batch.text(i),
    batch.timestamps[i],
    batch.lines[i]
  ])

/** `LineBatch.numberJsonText` of `writes`, cut into each write's text (`undefined`: none), in `writes`' order. */
export const numberJsons = (batch: LineBatch, writes: ReadonlyArray<number>): Array<string | undefined> => {
  const start = new Int32Array(batch.size)
  const end = new Int32Array(batch.size)
  const text = batch.numberJsonText(writes, start, end)
  // The texts follow one another in `writes`' order.
  let at = 0
  return writes.map((i) => {
    if (end[i] === 0) return undefined
    assert.strictEqual(start[i], at)
    at = end[i]!
    return text.slice(start[i], end[i])
  })
}

/** Write `i`'s point JSON (`LineBatch.numberJsonText` of it alone), `undefined` when the body's text is not it. */
export const numberJson = (batch: LineBatch, i: number): string | undefined => numberJsons(batch, [i])[0]

/** The error `body` is refused with; fails the test when it parses. */
export const parseError = (body: string, precision: Precision = "ns") => {
  const result = parse(body, precision)
  if (Either.isRight(result)) assert.fail(`${JSON.stringify(body)} parsed: ${JSON.stringify(writes(result.right))}`)
  return result.left
}
