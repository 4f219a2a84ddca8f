import { fitDial, view } from "../views/dial.js"
import { chartRenderer } from "./chart.js"

/** dial: an ECharts gauge, sized to its tile (see `fitDial`). */
export const renderer = chartRenderer(view, undefined, fitDial)
