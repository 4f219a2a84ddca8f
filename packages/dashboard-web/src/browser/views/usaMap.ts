import type { EChartsCoreOption } from "echarts/core"
import { mapOption, mapPoints, usaMapName } from "./map.js"
import { usaInset } from "./usaInset.js"

/** Pure: the tile's points as markers on the offline USA map, in their colours (default red). */
export const view = (entries: ReadonlyArray<{ readonly point: unknown }>): EChartsCoreOption | undefined => {
  const points = mapPoints(entries)
  return points.length === 0 ? undefined : mapOption(usaMapName, points, usaInset)
}
