import type { EChartsCoreOption } from "echarts/core"
import { namedColor, namedColors, record, toNumber, toText } from "../format.js"
import { base } from "./options.js"

/** ECharts map names of the two offline outlines (registered by `renderers/atlas.ts`). */
export const worldMapName = "ds-world"
export const usaMapName = "ds-usa"

/** One map point (docs/api.md section 3: `{latitude, longitude, color?, title?, body?}`). */
export interface MapPoint {
  readonly longitude: number
  readonly latitude: number
  /** CSS colour of one of the five named colours; red when the point names none. */
  readonly color: string
  readonly title: string
}

/** Pure: the points of a map tile; points off the globe or without coordinates are skipped. */
export const mapPoints = (entries: ReadonlyArray<{ readonly point: unknown }>): ReadonlyArray<MapPoint> =>
  entries.flatMap((e) => {
    const r = record(e.point)
    const latitude = r && toNumber(r["latitude"])
    const longitude = r && toNumber(r["longitude"])
    if (latitude === undefined || longitude === undefined || Math.abs(latitude) > 90 || Math.abs(longitude) > 180) {
      return []
    }
    return [
      { latitude, longitude, color: namedColor(r?.["color"]) ?? namedColors.red, title: toText(r?.["title"]) ?? "" }
    ]
  })

/**
 * Pure: an ECharts option drawing `points` as markers on the registered map `mapName` (an offline outline, see
 * `atlas.ts`); `place` moves a point the way the outline was moved (the USA map's Alaska and Hawaii insets).
 */
export const mapOption = (
  mapName: string,
  points: ReadonlyArray<MapPoint>,
  place: (longitude: number, latitude: number) => readonly [number, number] = (lon, lat) => [lon, lat]
): EChartsCoreOption => ({
  ...base,
  geo: { map: mapName, roam: false, silent: true, layoutCenter: ["50%", "50%"], layoutSize: "100%" },
  series: [
    {
      type: "scatter",
      coordinateSystem: "geo",
      symbol: "circle",
      symbolSize: 13,
      data: points.map((p) => ({
        name: p.title,
        value: place(p.longitude, p.latitude),
        itemStyle: { color: p.color, borderColor: "rgba(255,255,255,0.85)", borderWidth: 1.5, opacity: 0.95 }
      }))
    }
  ]
})
