import { view } from "../views/lineGraph.js"
import { chartRenderer } from "./chart.js"

/** line-graph: an ECharts line over time. */
export const renderer = chartRenderer(view)
