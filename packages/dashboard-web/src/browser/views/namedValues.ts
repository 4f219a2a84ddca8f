import { namedColor, record, toNumber, toText } from "../format.js"

/** One row of a leaderboard, pie or bar chart (docs/api.md section 3: `{name, value, prefix?, suffix?, color?}`). */
export interface NamedValue {
  readonly name: string
  readonly value: number
  readonly prefix?: string
  readonly suffix?: string
  /** CSS colour of a named colour (bar chart), when given. */
  readonly color?: string
}

/** Pure: the rows stored under `key` (`leaderboard` or `chart`, whichever is present first) of a state point. */
export const namedValues = (point: unknown, keys: ReadonlyArray<string>): ReadonlyArray<NamedValue> => {
  const r = record(point)
  const list = keys.map((k) => r?.[k]).find(Array.isArray)
  if (list === undefined) return []
  return list.flatMap((item: unknown) => {
    const i = record(item)
    const value = i && toNumber(i["value"])
    if (i === undefined || value === undefined) return []
    const prefix = toText(i["prefix"])
    const suffix = toText(i["suffix"])
    const color = namedColor(i["color"])
    return [
      {
        name: toText(i["name"]) ?? "",
        value,
        ...(prefix === undefined ? {} : { prefix }),
        ...(suffix === undefined ? {} : { suffix }),
        ...(color === undefined ? {} : { color })
      }
    ]
  })
}
