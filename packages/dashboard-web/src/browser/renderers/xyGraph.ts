import { view } from "../views/xyGraph.js"
import { chartRenderer } from "./chart.js"

/** xy-graph: an ECharts scatter. */
export const renderer = chartRenderer(view)
