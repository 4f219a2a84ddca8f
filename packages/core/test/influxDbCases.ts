/**
 * Line protocol bodies whose reading is easy to get wrong (escapes, line ends, odd bytes), each with what InfluxDB 1.x
 * does with it (`models/points.go`, checked against InfluxDB 1.6.7): refused (400), or stored, with the names of its
 * fields as Dashstream writes them to streams (`<measurement>.<field key>{<tag key>=<tag value>,...}`). Dashstream
 * reads each the same way, except where `dashstream` says otherwise (a deliberate difference, docs/protocols.md
 * "Differences from InfluxDB"). The core parser's tests and the end-to-end comparison with a running InfluxDB both read
 * this table. Timestamps are in seconds.
 */
export interface InfluxDbCase {
  readonly body: string
  /** The streams of the fields InfluxDB stores, or `"refused"`. */
  readonly influxdb: ReadonlyArray<string> | "refused"
  /** Dashstream's outcome where it differs on purpose; `undefined` when it is InfluxDB's. */
  readonly dashstream?: ReadonlyArray<string> | "refused"
  /** Where the core parser alone cannot tell (the HTTP layer strips a byte order mark), `"http"`. */
  readonly layer?: "http"
  /**
   * When InfluxDB 1.6's own queries name the measurement otherwise than its parser does, the name `SHOW MEASUREMENTS`
   * gives (its index unescapes the name once more, and lists no field under it).
   */
  readonly influxdbIndexName?: string
}

const T = "1700000000"

export const influxDbCases: ReadonlyArray<InfluxDbCase> = [
  // The character after a backslash is escaped, a backslash included: `\\` before a separator does not end a name.
  { body: String.raw`m\\ f=1 ${T}`, influxdb: "refused" },
  { body: String.raw`m,t=v\\ f=1 ${T}`, influxdb: "refused" },
  { body: String.raw`m f\\=1 ${T}`, influxdb: "refused" },
  { body: String.raw`m\\ f=2 f=1 ${T}`, influxdb: [String.raw`m\ f=2.f`], influxdbIndexName: "m f=2" },
  { body: String.raw`m\\,t=v f=1 ${T}`, influxdb: [String.raw`m\,t=v.f`], influxdbIndexName: "m,t=v" },
  { body: String.raw`m,t=a\\,u=b f=1 ${T}`, influxdb: "refused" },
  { body: String.raw`m,t\\=x=v f=1 ${T}`, influxdb: [String.raw`m.f{t\=x=v}`] },
  { body: String.raw`m,t=v\\\ w f=1 ${T}`, influxdb: [String.raw`m.f{t=v\\ w}`] },
  { body: String.raw`m,t=v f=1,g\\,h=2 ${T}`, influxdb: "refused" },
  { body: String.raw`m f=1,g\\=2 ${T}`, influxdb: "refused" },
  { body: String.raw`m f\\\=1 ${T}`, influxdb: "refused" },
  // A field key read twice by InfluxDB (as pairs of characters, then as escaped characters): `f\\=1,g` is one key.
  { body: String.raw`m f\\=1,g=2,h=3 ${T}`, influxdb: [String.raw`m.f\=1,g`, "m.h"] },
  { body: String.raw`m f\\=t,g\\=2,h=3 ${T}`, influxdb: [String.raw`m.f\=t,g\=2,h`] },
  { body: String.raw`m f\\=1,,g=2 ${T}`, influxdb: "refused" },
  { body: String.raw`m f\\=1,g h=2 ${T}`, influxdb: "refused" },
  // `\"` is `"` in a measurement and a field key, but stays in tags; `\=` is `=` in all of them.
  { body: String.raw`m\" f=1 ${T}`, influxdb: ['m".f'] },
  { body: String.raw`m f\"g=1 ${T}`, influxdb: ['m.f"g'] },
  { body: String.raw`m\=x,t\"=v\" f\=g=1 ${T}`, influxdb: [String.raw`m=x.f=g{t\"=v\"}`] },
  // A backslash before any other character stays.
  { body: String.raw`m\\x f\\y=1 ${T}`, influxdb: [String.raw`m\\x.f\\y`] },
  { body: String.raw`m\x f\y=1 ${T}`, influxdb: [String.raw`m\x.f\y`] },
  // A tag value's first character is read as part of it, even `=`.
  { body: `m,t==v f=1 ${T}`, influxdb: ["m.f{t==v}"] },
  // Line ends: `\r\n` is a line end here (InfluxDB reads the `\r` into the line and refuses it); a bare `\r` is not.
  { body: `m f=1 ${T}\r\n`, influxdb: "refused", dashstream: ["m.f"] },
  { body: `m f=1 ${T}\r\nm g=2 ${T}\r\n`, influxdb: "refused", dashstream: ["m.f", "m.g"] },
  { body: `m f=1 ${T}\rm f=2 1700000001`, influxdb: "refused" },
  { body: "m f=1\r", influxdb: "refused" },
  { body: `m f=1 ${T}\n\r`, influxdb: "refused" },
  { body: `m f=1 ${T}\n\r\n`, influxdb: "refused", dashstream: ["m.f"] },
  // A `\n` after a backslash (not the body's last character) continues the line, in a comment too.
  { body: "m,t=a\\\nb f=1", influxdb: ["m.f{t=a\\\nb}"] },
  { body: "# c\\\nm f=1\nm g=2", influxdb: ["m.g"] },
  // A comment line ends as any line does: a `"` after more `=` than `,` opens a string that the line ends with.
  { body: `# a="b\nm f=1\nm g=2 ${T}`, influxdb: [] },
  { body: `# a="b\nm f=1\nm g="x" ${T}\nm h=3 ${T}`, influxdb: [] },
  { body: `# a="b\nm f="x\nm h=3 ${T}`, influxdb: ["m.h"] },
  { body: ` #a="b\nm f=1 ${T}`, influxdb: [] },
  { body: `#a="b\nm f=1 ${T}`, influxdb: ["m.f"] },
  { body: "m\\\\\nx f=1", influxdb: "refused" },
  // Whitespace: only spaces after a timestamp; spaces and tabs before it.
  { body: `m f=1 ${T}\t`, influxdb: "refused" },
  { body: "m f=1\t", influxdb: "refused" },
  { body: `m f=1 \t${T}`, influxdb: ["m.f"] },
  { body: `m f=1 ${T}  `, influxdb: ["m.f"] },
  { body: "m f=1 \t", influxdb: ["m.f"] },
  // A UTF-8 byte order mark starting the body is stripped here, part of the measurement in InfluxDB.
  { body: `\ufeffm f=1 ${T}`, influxdb: ["\ufeffm.f"], dashstream: ["m.f"], layer: "http" }
]
