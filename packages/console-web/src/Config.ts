/**
 * The JSON embedded in the console page (`<script type="application/json" id="ds-console">`): what the browser code
 * needs from the server besides the admin API. Never a secret: the page is served before sign-in.
 */
export interface ConsoleConfig {
  /** URL paths of the TopoJSON map outlines (the dashboard page's files), for the layout editor's map tiles. */
  readonly maps: { readonly world: string; readonly usa: string }
}
