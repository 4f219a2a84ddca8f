import { view } from "../views/dial.js"
import { chartRenderer } from "./chart.js"

/** dial: an ECharts gauge. */
export const renderer = chartRenderer(view)
