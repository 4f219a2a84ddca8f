import { record, toText } from "../format.js"
import { latestPoint } from "./latest.js"

/** Pure: the latest `{list: [{listItem}]}` as texts, top first (docs/api.md section 3), at most 50. */
export const view = (entries: ReadonlyArray<{ readonly point: unknown }>): ReadonlyArray<string> | undefined => {
  const list = record(latestPoint(entries))?.["list"]
  if (!Array.isArray(list)) return undefined
  const items = list
    .map((item: unknown) => toText(record(item)?.["listItem"]) ?? toText(item))
    .filter((t): t is string => t !== undefined)
    .slice(0, 50)
  return items.length === 0 ? undefined : items
}
