import { view } from "../views/multiBarGraph.js"
import { fitAxes } from "../views/options.js"
import { chartRenderer } from "./chart.js"

/** multi-bar-graph: grouped ECharts bars with a legend. */
export const renderer = chartRenderer(view, undefined, fitAxes)
