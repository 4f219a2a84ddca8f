/**
 * A small, strict parser of the Prometheus text exposition format 0.0.4, for tests that scrape `/metrics`: it
 * throws on any line it does not understand, so a malformed answer fails the test rather than being skipped.
 */

/** One sample line: `name{label="value",...} value`. */
export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/** A parsed exposition: every sample, and the `# TYPE` and `# HELP` of each family. */
export interface Exposition {
  readonly samples: ReadonlyArray<Sample>
  readonly types: ReadonlyMap<string, string>
  readonly help: ReadonlyMap<string, string>
}

const namePattern = /^[a-zA-Z_:][a-zA-Z0-9_:]*/
const labelNamePattern = /^[a-zA-Z_][a-zA-Z0-9_]*/
const types = new Set(["counter", "gauge", "histogram", "summary", "untyped"])

// Prometheus reads values with Go's ParseFloat: `NaN` and `Inf` in any case (prom-client writes `Nan`).
const parseValue = (text: string, line: string): number => {
  const lower = text.toLowerCase()
  if (lower === "+inf" || lower === "inf") return Infinity
  if (lower === "-inf") return -Infinity
  if (lower === "nan") return NaN
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad sample value in ${line}`)
  return Number(text)
}

// Parses `{a="x",b="y"}` at the start of `text`; returns the labels and the rest of the text.
const parseLabels = (text: string, line: string): [Record<string, string>, string] => {
  const labels: Record<string, string> = {}
  let rest = text.slice(1)
  for (;;) {
    if (rest.startsWith("}")) return [labels, rest.slice(1)]
    const name = labelNamePattern.exec(rest)?.[0]
    if (name === undefined || rest.charAt(name.length) !== "=" || rest.charAt(name.length + 1) !== '"') {
      throw new Error(`bad label in ${line}`)
    }
    rest = rest.slice(name.length + 2)
    let value = ""
    for (;;) {
      const c = rest.charAt(0)
      if (c === "") throw new Error(`unterminated label value in ${line}`)
      rest = rest.slice(1)
      if (c === '"') break
      if (c === "\\") {
        const escaped = rest.charAt(0)
        rest = rest.slice(1)
        if (escaped === "n") value += "\n"
        else if (escaped === "\\" || escaped === '"') value += escaped
        else throw new Error(`bad escape in ${line}`)
      } else value += c
    }
    if (Object.hasOwn(labels, name)) throw new Error(`repeated label ${name} in ${line}`)
    labels[name] = value
    if (rest.startsWith(",")) rest = rest.slice(1)
    else if (!rest.startsWith("}")) throw new Error(`bad label list in ${line}`)
  }
}

/** Parses `text`; throws on a malformed line, an unknown `# TYPE`, or a sample of a family with no `# TYPE`. */
export const parseExposition = (text: string): Exposition => {
  const samples: Array<Sample> = []
  const typeOf = new Map<string, string>()
  const help = new Map<string, string>()
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line)
      if (m === null) continue // a plain comment
      if (m[1] === "TYPE") {
        if (!types.has(m[3]!)) throw new Error(`unknown type in ${line}`)
        typeOf.set(m[2]!, m[3]!)
      } else help.set(m[2]!, m[3]!)
      continue
    }
    const name = namePattern.exec(line)?.[0]
    if (name === undefined) throw new Error(`bad sample line ${line}`)
    let rest = line.slice(name.length)
    let labels: Record<string, string> = {}
    if (rest.startsWith("{")) [labels, rest] = parseLabels(rest, line)
    const parts = rest.trim().split(/\s+/)
    if (!rest.startsWith(" ") || parts.length < 1 || parts.length > 2) throw new Error(`bad sample line ${line}`)
    const family = [name, name.replace(/_(bucket|sum|count)$/, "")].find((n) => typeOf.has(n))
    if (family === undefined) throw new Error(`sample of a family without # TYPE: ${line}`)
    samples.push({ name, labels, value: parseValue(parts[0]!, line) })
  }
  return { samples, types: typeOf, help }
}

/**
 * The value of the sample `name` whose labels include `labels` (every given label equal; others ignored), summed
 * over every matching sample; 0 when none matches.
 */
export const valueOf = (
  exposition: Exposition,
  name: string,
  labels: Readonly<Record<string, string>> = {}
): number => {
  let sum = 0
  for (const sample of exposition.samples) {
    if (sample.name !== name) continue
    if (Object.entries(labels).every(([k, v]) => sample.labels[k] === v)) sum += sample.value
  }
  return sum
}
