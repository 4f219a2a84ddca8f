import type { WidgetType } from "../../WidgetType.js"
import * as barChart from "./barChart.js"
import * as dial from "./dial.js"
import * as gallery from "./gallery.js"
import * as horizontalBar from "./horizontalBar.js"
import * as html from "./html.js"
import * as image from "./image.js"
import * as label from "./label.js"
import * as leaderboard from "./leaderboard.js"
import * as lineGraph from "./lineGraph.js"
import * as list from "./list.js"
import * as multiBarGraph from "./multiBarGraph.js"
import * as number from "./number.js"
import * as pieChart from "./pieChart.js"
import { erase, type AnyRenderer } from "./Renderer.js"
import * as sparkline from "./sparkline.js"
import * as table from "./table.js"
import * as textFeed from "./textFeed.js"
import * as usaMap from "./usaMap.js"
import * as verticalBar from "./verticalBar.js"
import * as worldMap from "./worldMap.js"
import * as xyGraph from "./xyGraph.js"

/** The renderer of each of the 20 widget types (docs/api.md section 2), one module each. */
export const renderers: Readonly<Record<WidgetType, AnyRenderer>> = {
  number: erase(number.renderer),
  "horizontal-bar": erase(horizontalBar.renderer),
  "vertical-bar": erase(verticalBar.renderer),
  dial: erase(dial.renderer),
  sparkline: erase(sparkline.renderer),
  "line-graph": erase(lineGraph.renderer),
  "usa-map": erase(usaMap.renderer),
  "world-map": erase(worldMap.renderer),
  "text-feed": erase(textFeed.renderer),
  leaderboard: erase(leaderboard.renderer),
  "pie-chart": erase(pieChart.renderer),
  "bar-chart": erase(barChart.renderer),
  list: erase(list.renderer),
  image: erase(image.renderer),
  label: erase(label.renderer),
  table: erase(table.renderer),
  gallery: erase(gallery.renderer),
  html: erase(html.renderer),
  "xy-graph": erase(xyGraph.renderer),
  "multi-bar-graph": erase(multiBarGraph.renderer)
}
