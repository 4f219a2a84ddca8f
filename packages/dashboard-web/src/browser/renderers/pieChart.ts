import { view } from "../views/pieChart.js"
import { fitPie } from "../views/options.js"
import { chartRenderer } from "./chart.js"

/** pie-chart: an ECharts doughnut. */
export const renderer = chartRenderer(view, undefined, fitPie)
