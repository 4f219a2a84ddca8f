import { mountChart } from "../charts.js"
import { view } from "../views/sparkline.js"
import { lineRenderer } from "./line.js"

/** sparkline: the latest value (in its status colour) over an axis-less line. */
export const renderer = lineRenderer(view, "ds-spark-value", (body, ctx) => mountChart(body, ctx))
