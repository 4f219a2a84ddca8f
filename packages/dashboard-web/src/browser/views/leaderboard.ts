import { formatValue } from "../format.js"
import { namedValues } from "./namedValues.js"
import { latestPoint } from "./latest.js"

/** One leaderboard row as shown: rank (1-based), name, value with prefix/suffix. */
export interface LeaderRow {
  readonly rank: number
  readonly name: string
  readonly value: string
}

/** Pure: the latest leaderboard in its stored order (highest first after `leaderboardItem`), at most 20 rows. */
export const view = (entries: ReadonlyArray<{ readonly point: unknown }>): ReadonlyArray<LeaderRow> | undefined => {
  const rows = namedValues(latestPoint(entries), ["leaderboard"])
    .slice(0, 20)
    .map((r, i) => ({ rank: i + 1, name: r.name, value: formatValue(r.value, r.prefix, r.suffix) }))
  return rows.length === 0 ? undefined : rows
}
