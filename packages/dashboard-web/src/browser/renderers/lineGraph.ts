import { mountChart } from "../charts.js"
import { fitLineGraph, view } from "../views/lineGraph.js"
import { lineRenderer } from "./line.js"

/**
 * line-graph: the latest value (in its status colour) above an ECharts line over time, sized to its tile; a drag
 * across it zooms the page's time tiles (docs/api.md section 11.6).
 */
export const renderer = lineRenderer(view, "ds-line-value", (body, ctx) =>
  mountChart(body, ctx, undefined, fitLineGraph, true)
)
