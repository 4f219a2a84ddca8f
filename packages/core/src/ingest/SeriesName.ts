import { quoted } from "../Errors.js"
import { MAX_STREAM_NAME_LENGTH } from "../StreamName.js"

/**
 * How a push dialect whose points carry a name and tags (a series) names the streams of its fields, written once for
 * every such dialect (docs/api.md, section 13.1, "Stream of a field"): `<prefix><field><suffix>`, where the suffix is
 * the tags as `{k=v,...}` in the byte order of their keys' UTF-8 forms (`""` without tags). Line protocol's prefix is
 * `<measurement>.`: `cpu.usage_idle{cpu=cpu0,host=web1}`.
 */

/** `a` compared with `b` in the byte order of their UTF-8 forms (code point order), as Go's `bytes.Compare`. */
export const compareUtf8 = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x === y) continue
    // UTF-16 code units sort surrogates (code points above U+FFFF) below U+E000-U+FFFF; UTF-8 sorts them above.
    if (x >= 0xd800) x = x >= 0xe000 ? x - 0x800 : x + 0x2000
    if (y >= 0xd800) y = y >= 0xe000 ? y - 0x800 : y + 0x2000
    return x - y
  }
  return a.length - b.length
}

/** Two tags of one series with the same key, which no stream name can hold: `problem` says so. */
export class DuplicateTag {
  constructor(readonly key: string) {}

  get problem(): string {
    return `duplicate tag ${quoted(this.key)}`
  }
}

// The order of the tags being sorted; reused from call to call (the sort is synchronous).
const order: Array<number> = []

/**
 * The tags `keys[k]=values[k]` (escapes removed) as a stream name's suffix, `{k=v,...}` in the byte order of the keys'
 * UTF-8 forms; {@link DuplicateTag} when two keys are the same. No tags is `""`.
 */
export const tagsText = (keys: ReadonlyArray<string>, values: ReadonlyArray<string>): string | DuplicateTag => {
  const count = keys.length
  if (count === 0) return ""
  let sorted = true
  for (let k = 1; k < count; k++) {
    const cmp = compareUtf8(keys[k - 1]!, keys[k]!)
    if (cmp === 0) return new DuplicateTag(keys[k]!)
    if (cmp > 0) sorted = false
  }
  let suffix = "{"
  if (sorted) {
    for (let k = 0; k < count; k++) suffix += (k === 0 ? "" : ",") + keys[k] + "=" + values[k]
    return suffix + "}"
  }
  order.length = 0
  if (count <= 16) {
    // Insertion sort: a series has few tags, and Telegraf sends them sorted already.
    for (let k = 0; k < count; k++) {
      let j = k
      while (j > 0 && compareUtf8(keys[order[j - 1]!]!, keys[k]!) > 0) {
        order[j] = order[j - 1]!
        j--
      }
      order[j] = k
    }
  } else {
    // Many tags (a hostile body may hold a million on one line): n log n, not n^2.
    for (let k = 0; k < count; k++) order.push(k)
    order.sort((a, b) => compareUtf8(keys[a]!, keys[b]!))
  }
  for (let k = 1; k < count; k++) {
    if (keys[order[k - 1]!] === keys[order[k]!]) return new DuplicateTag(keys[order[k]!]!)
  }
  for (let k = 0; k < count; k++) suffix += (k === 0 ? "" : ",") + keys[order[k]!] + "=" + values[order[k]!]
  return suffix + "}"
}

/**
 * The stream names of a series' fields: `<prefix><field><suffix>` (see {@link tagsText} for the suffix), made once
 * per field key and series, so that every write of one stream shares one name string (hashed once where it is a map
 * key later, the widget lookups of `UseCases.ingest`).
 */
export class SeriesName {
  /**
   * The one name of every field of a series whose prefix and suffix are already longer than a stream name may be
   * (255 characters, 510 UTF-16 units), so that none is a stream name and they are skipped: a name of its own per field
   * would cost time in proportion to the series' length for every field (building and hashing it).
   */
  readonly shared: string | undefined

  constructor(
    readonly prefix: string,
    readonly suffix: string
  ) {
    this.shared = prefix.length + suffix.length > 2 * MAX_STREAM_NAME_LENGTH ? prefix + suffix : undefined
  }

  /** The stream of field `key` (escapes removed) of this series. */
  stream(key: string): string {
    return this.shared ?? this.prefix + key + this.suffix
  }
}
