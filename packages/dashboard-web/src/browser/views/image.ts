import { record, safeImageUrl } from "../format.js"
import { latestPoint } from "./latest.js"

/** Pure: the latest `{imgUrl}` when it is an http(s) URL (anything else shows the empty state). */
export const view = (entries: ReadonlyArray<{ readonly point: unknown }>): string | undefined =>
  safeImageUrl(record(latestPoint(entries))?.["imgUrl"])
