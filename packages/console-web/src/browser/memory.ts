/**
 * What the console remembers while the page is open, in memory only (never in storage or a URL):
 * - view links: the server shows a dashboard's view link only when it is made (create, rotate), so the ones made
 *   on this page are kept to open the view page later;
 * - unsaved layouts: a layout edited and not saved yet survives leaving the editor and coming back (docs/api.md
 *   section 14: "unsaved changes are kept").
 */
import type { TileJson } from "./api.js"

const viewLinks = new Map<string, string>()

/** Remembers the view link (`/d/<viewToken>`) of a dashboard. */
export const rememberViewLink = (dashboardId: string, url: string): void => void viewLinks.set(dashboardId, url)

/** The view link of a dashboard, when this page made it. */
export const viewLink = (dashboardId: string): string | undefined => viewLinks.get(dashboardId)

/** Forgets a dashboard's view link (the dashboard was deleted). */
export const forgetViewLink = (dashboardId: string): void => void viewLinks.delete(dashboardId)

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
