import { view } from "../views/barChart.js"
import { fitAxes } from "../views/options.js"
import { chartRenderer } from "./chart.js"

/** bar-chart: ECharts bars in their colours. */
export const renderer = chartRenderer(view, undefined, fitAxes)
