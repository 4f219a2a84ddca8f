const NUMBER_ONLY = '{"number":'
// A JSON number (RFC 8259 section 6), which `Number` reads as JSON.parse does.
const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/

/**
 * The number of a stored numeric entry (its `number`, after deltas), or `null` for an entry of another kind. Parsed
 * from the entry's JSON only for streams that have rules (docs/api.md section 18.1: the value a rule evaluates).
 */
export const entryValue = (json: string): number | null => {
  // A point of only a number (as `Apply.ts` writes it) is read without JSON.parse: the same number.
  if (json.startsWith(NUMBER_ONLY) && json.endsWith("}")) {
    const text = json.slice(NUMBER_ONLY.length, -1)
    if (JSON_NUMBER.test(text)) {
      const number = Number(text)
      return Number.isFinite(number) ? number : null
    }
  }
  if (!json.includes('"number"')) return null
  const point: unknown = JSON.parse(json)
  const number = typeof point === "object" && point !== null ? (point as { number?: unknown }).number : undefined
  return typeof number === "number" && Number.isFinite(number) ? number : null
}
