import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { compareUtf8, DuplicateTag, SeriesName, tagsText } from "../src/ingest/SeriesName.js"
import { MAX_STREAM_NAME_LENGTH } from "../src/StreamName.js"

const utf8Order = (a: string, b: string) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"))
const key = fc.string({ unit: "binary", minLength: 1, maxLength: 4 })

describe("SeriesName", () => {
  it("compareUtf8 orders as the UTF-8 bytes do", () => {
    fc.assert(
      fc.property(key, key, (a, b) => assert.strictEqual(Math.sign(compareUtf8(a, b)), utf8Order(a, b))),
      { numRuns: 2000 }
    )
  })

  it("tagsText writes the tags in UTF-8 byte order of their keys, whatever their order and number", () => {
    fc.assert(
      fc.property(fc.uniqueArray(key, { minLength: 1, maxLength: 40 }), (keys) => {
        const values = keys.map((k, i) => `${k}v${i}`)
        const expected = keys
          .map((k, i) => [k, values[i]!] as const)
          .sort(([a], [b]) => utf8Order(a, b))
          .map(([k, v]) => `${k}=${v}`)
        assert.strictEqual(tagsText(keys, values), `{${expected.join(",")}}`)
      })
    )
    assert.strictEqual(tagsText([], []), "")
  })

  it("tagsText refuses a key given twice, sorted or not, few tags or many", () => {
    fc.assert(
      fc.property(fc.uniqueArray(key, { minLength: 1, maxLength: 40 }), fc.nat(), fc.nat(), (keys, from, to) => {
        const twice = keys[from % keys.length]!
        const withDuplicate = [...keys]
        withDuplicate.splice(to % (keys.length + 1), 0, twice)
        const result = tagsText(withDuplicate, withDuplicate)
        assert.instanceOf(result, DuplicateTag)
        assert.strictEqual((result as DuplicateTag).key, twice)
      })
    )
    assert.strictEqual((tagsText(["b", "a", "b"], ["1", "2", "3"]) as DuplicateTag).problem, 'duplicate tag "b"')
  })

  it("names a field's stream <prefix><field><suffix>, one shared name when prefix and suffix are too long", () => {
    const series = new SeriesName("cpu.", "{host=web1}")
    assert.strictEqual(series.stream("usage_idle"), "cpu.usage_idle{host=web1}")
    assert.strictEqual(series.shared, undefined)
    const long = new SeriesName("m".repeat(2 * MAX_STREAM_NAME_LENGTH) + ".", "")
    assert.strictEqual(long.stream("a"), long.stream("b"))
    assert.strictEqual(long.stream("a"), long.shared)
  })
})
