/**
 * The dashboard page's tile drawing, for other pages of Dashstream that show tiles exactly as the view page does
 * (the console's layout editor, docs/api.md section 14: "drawn by the same renderers as the view page"). Bundled from
 * source by the importing page's own build; the view page itself starts in `main.ts`.
 *
 * - {@link Tile}: the tile frame (title, empty and "stream deleted" states) around its widget type's renderer;
 *   feed it entries (`setEntries`, `addEntry`, `clear`) and call `draw`, at most once per frame.
 * - `style.css` (export `@dashstream/dashboard-web/style.css`): the tiles' styles, themes included.
 */
export type { Entry, TileModel } from "../Model.js"
export { heldEntries, widgetTypes, type WidgetType } from "../WidgetType.js"
export { el } from "./dom.js"
export type { RenderContext } from "./renderers/Renderer.js"
export { Tile, type TileState } from "./Tile.js"
export { addEntry, snapshotEntries } from "./TileData.js"
