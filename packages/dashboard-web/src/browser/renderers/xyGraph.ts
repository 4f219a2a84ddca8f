import { view } from "../views/xyGraph.js"
import { fitAxes } from "../views/options.js"
import { chartRenderer } from "./chart.js"

/** xy-graph: an ECharts scatter. */
export const renderer = chartRenderer(view, undefined, fitAxes)
