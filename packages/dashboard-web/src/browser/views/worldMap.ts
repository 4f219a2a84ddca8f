import type { EChartsCoreOption } from "echarts/core"
import { mapOption, mapPoints, worldMapName } from "./map.js"

/** Pure: the tile's points as markers on the offline world map, in their colours (default red). */
export const view = (entries: ReadonlyArray<{ readonly point: unknown }>): EChartsCoreOption | undefined => {
  const points = mapPoints(entries)
  return points.length === 0 ? undefined : mapOption(worldMapName, points)
}
