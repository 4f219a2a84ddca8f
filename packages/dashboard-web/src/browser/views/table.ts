import { record, toText } from "../format.js"
import { latestPoint } from "./latest.js"

/** The table tile: its header row and its data rows (at most 50), every cell as text. */
export interface TableView {
  readonly header: ReadonlyArray<string>
  readonly rows: ReadonlyArray<ReadonlyArray<string>>
}

/** Pure: the latest `{table: [[header...], [cell...], ...]}` (docs/api.md section 3). */
export const view = (entries: ReadonlyArray<{ readonly point: unknown }>): TableView | undefined => {
  const table = record(latestPoint(entries))?.["table"]
  if (!Array.isArray(table) || table.length === 0) return undefined
  const cells = (row: unknown): ReadonlyArray<string> =>
    Array.isArray(row) ? row.map((c: unknown) => toText(c) ?? "") : []
  return { header: cells(table[0]), rows: table.slice(1, 51).map(cells) }
}
