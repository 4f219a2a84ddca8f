import { record, toText } from "../format.js"
import { latestPoint } from "./latest.js"

/** Pure: the latest `{label}` text. */
export const view = (entries: ReadonlyArray<{ readonly point: unknown }>): string | undefined => {
  const text = toText(record(latestPoint(entries))?.["label"])
  return text === undefined || text === "" ? undefined : text
}
