/**
 * The body's UTF-16 code units as the lexer scans them (`codes[i]` is `body.charCodeAt(i)`): an ASCII body's bytes
 * (a byte is a unit there, so an index into them is an index into the string), else the units copied from the
 * string. Reading a typed array costs about half a `charCodeAt` (the scan of a line's series and timestamp was most
 * of the parse).
 */
export type BodyCodes = Uint8Array | Uint16Array

/**
 * The series (a line's measurement and tags) and field keys the line protocol lexer (`LineProtocolLexer.ts`) has met,
 * found again by their text (escapes kept) so that a line of a known series costs no parse of its names, no
 * substring and no call of the sink: a symbol table, as Prometheus' and InfluxDB's series index are. A body's lines
 * are mostly a few series again and again, and an agent's next body the same series again: a table kept from body to
 * body (`parseLineProtocol`'s) parses each series once per process rather than once per body.
 *
 * Bounded: at most `slots` series (a series displaces the one in its slot, by a hash of its text) and about
 * {@link LineSymbols.maxUnits} UTF-16 units of text held (the series' and field keys' texts, the names made of them and
 * an allowance per object, see `cost`); past that the table starts again empty. The shared table's 4,096 series thus
 * hold at most about 8 MiB whatever the bodies (a series whose text alone is over the bound is never kept).
 */

/** A series met before: its text, the sink's handle of it and its field keys (see {@link LineSymbols}). */
export class KnownSeries<S, F> {
  /**
   * The first field key of the series' latest line, which links to the next ones: a line's fields are found again by
   * position (Telegraf writes a series' fields in one order). A list rather than an array: no array per series.
   */
  first: KnownField<F> | undefined = undefined
  /**
   * The slot of the series of the line after the latest line of this one, -1 before one: a slot rather than the
   * series, so that series displaced from the table are not kept alive through their successors.
   */
  nextSlot = -1

  constructor(
    /** Its slot in the table. */
    readonly slot: number,
    /** Its text, escapes kept: a copy of the body's code units. */
    readonly text: BodyCodes,
    /** The sink's handle of it. */
    readonly handle: S
  ) {}
}

/**
 * A field key of a {@link KnownSeries}: its text (escapes kept, a copy of the body's code units), the key (escapes
 * removed), the sink's handle of it, and the field key after it in the series' latest line.
 */
export class KnownField<F> {
  constructor(
    readonly text: BodyCodes,
    readonly key: string,
    readonly field: F,
    public next: KnownField<F> | undefined
  ) {}
}

/**
 * A copy of `codes[start, end)`, of the same kind: the table outlives the body, whose bytes (a request's buffer) may
 * be reused (a `Buffer`'s `slice` would be a view of them).
 */
export const copyOf = (codes: BodyCodes, start: number, end: number): BodyCodes => {
  const text = codes instanceof Uint16Array ? new Uint16Array(end - start) : new Uint8Array(end - start)
  text.set(codes.subarray(start, end))
  return text
}

/**
 * True when `codes[at, at + text.length)` is `text`: compared unit by unit, no allocation. The caller checks that the
 * body is long enough (the unit after the text is a separator it reads first).
 */
export const sameCodes = (codes: BodyCodes, at: number, text: BodyCodes): boolean => {
  const length = text.length
  for (let k = 0; k < length; k++) if (codes[at + k] !== text[k]) return false
  return true
}

// The units a kept series or field costs besides its text: the objects and the strings of its names (see `cost`).
const objectUnits = 64

/**
 * The table of known series (see the module's comment). A table may be shared by the lexings of many bodies only when
 * its sink's handles depend on nothing but the text they were made from (`LineBatch`'s stream names do); otherwise a
 * table per body. The lexer reads and writes it synchronously, so no two lexings use it at once.
 */
export class LineSymbols<S, F> {
  /** About this many UTF-16 units of text, names and objects are held at most, after which the table starts again. */
  static readonly maxUnits = 4 * 1024 * 1024

  private readonly table: Array<KnownSeries<S, F> | undefined>
  private readonly mask: number
  // What the kept series and fields cost so far, in units (see `maxUnits`).
  private units = 0

  /** `slots` (a power of two) series at most. */
  constructor(slots: number) {
    this.table = new Array(slots)
    this.mask = slots - 1
  }

  /** The slot of a series whose text hashes to `hash`. */
  slotOf(hash: number): number {
    return (hash ^ (hash >>> 8) ^ (hash >>> 16)) & this.mask
  }

  /** The series in `slot`, if any. */
  at(slot: number): KnownSeries<S, F> | undefined {
    return this.table[slot]
  }

  /**
   * Keeps `series` in its slot, displacing the one there. A series costs its text twice (the text and the names made
   * of it); one whose cost alone is over the bound is not kept.
   */
  keep(series: KnownSeries<S, F>): void {
    const cost = 2 * series.text.length + objectUnits
    if (cost > LineSymbols.maxUnits) return
    this.charge(cost)
    this.table[series.slot] = series
  }

  /**
   * Counts a field key kept with a series of `seriesLength` units: its text, its key, and its stream's name (about
   * the series and the key). Returns false, keeping nothing, when the key alone is over the bound.
   */
  keepField(seriesLength: number, keyLength: number): boolean {
    const cost = seriesLength + 3 * keyLength + objectUnits
    if (cost > LineSymbols.maxUnits) return false
    this.charge(cost)
    return true
  }

  // Adds `cost`, starting the table again first when the bound would be passed: what is in use stays alive only as
  // long as the lexing that holds it.
  private charge(cost: number): void {
    if (this.units + cost > LineSymbols.maxUnits) {
      this.table.fill(undefined)
      this.units = 0
    }
    this.units += cost
  }
}
