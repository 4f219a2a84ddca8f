import type { EChartsCoreOption } from "echarts/core"
import { mountChart } from "../charts.js"
import type { RenderContext, Renderer } from "./Renderer.js"

/**
 * A renderer whose view is an ECharts option, drawn by one SVG chart filling the tile. `before` runs once before
 * the first draw (loading a map outline); `fit` adapts the option to the chart's size in pixels.
 */
export const chartRenderer = (
  view: Renderer<EChartsCoreOption>["view"],
  before?: (ctx: RenderContext) => Promise<void>,
  fit?: (option: EChartsCoreOption, width: number, height: number) => EChartsCoreOption
): Renderer<EChartsCoreOption> => ({
  view,
  mount: (body, ctx) => mountChart(body, ctx, before === undefined ? undefined : () => before(ctx), fit)
})
