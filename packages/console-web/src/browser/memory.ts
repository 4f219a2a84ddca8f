/**
 * What the console remembers while the page is open, in memory only (never in storage or a URL): unsaved layouts, so
 * that a layout edited and not saved yet survives leaving the editor and coming back (docs/api.md section 14:
 * "unsaved changes are kept").
 */
import type { TileJson } from "./api.js"

/** A layout being edited: its name and tiles, each with the editor's key. */
export interface Draft {
  readonly name: string
  readonly tiles: ReadonlyArray<{ readonly key: string; readonly tile: TileJson }>
}

const drafts = new Map<string, Draft>()

/** The unsaved layout of a dashboard, if any. */
export const draftOf = (dashboardId: string): Draft | undefined => drafts.get(dashboardId)

/** Keeps (or, with `undefined`, drops) the unsaved layout of a dashboard. */
export const keepDraft = (dashboardId: string, draft: Draft | undefined): void => {
  if (draft === undefined) drafts.delete(dashboardId)
  else drafts.set(dashboardId, draft)
}

/** True while some layout has unsaved changes (the page asks before it is closed). */
export const hasDrafts = (): boolean => drafts.size > 0
