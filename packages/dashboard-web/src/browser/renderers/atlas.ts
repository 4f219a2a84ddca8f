import type { EChartsCoreOption } from "echarts/core"
import type { FeatureCollection, Geometry, Position } from "geojson"
import { feature } from "topojson-client"
import type { Topology } from "topojson-specification"
import { registerMapOnce } from "../charts.js"
import { foldAntimeridian } from "../views/antimeridian.js"
import { usaMapName, worldMapName } from "../views/map.js"
import { usaInset } from "../views/usaInset.js"

const load = async (url: string, object: string): Promise<FeatureCollection> => {
  const response = await fetch(url, { credentials: "same-origin" })
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`)
  const topology = (await response.json()) as Topology
  return feature(topology, topology.objects[object]!) as FeatureCollection
}

const mapRings = (g: Geometry, f: (ring: ReadonlyArray<Position>) => ReadonlyArray<Position>): Geometry => {
  switch (g.type) {
    case "Polygon":
      return { ...g, coordinates: g.coordinates.map((ring) => [...f(ring)]) }
    case "MultiPolygon":
      return { ...g, coordinates: g.coordinates.map((poly) => poly.map((ring) => [...f(ring)])) }
    default:
      return g
  }
}

/** Width/height of each registered map as ECharts draws it (its default `aspectScale` of 0.75 included). */
export const mapAspects = new Map<string, number>()

const register = (name: string, load: () => Promise<FeatureCollection>): Promise<void> =>
  registerMapOnce(name, async () => {
    const fc = await load()
    let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity]
    const visit = (c: unknown): void => {
      if (Array.isArray(c) && typeof c[0] === "number") {
        x0 = Math.min(x0, c[0])
        x1 = Math.max(x1, c[0])
        y0 = Math.min(y0, c[1] as number)
        y1 = Math.max(y1, c[1] as number)
      } else if (Array.isArray(c)) c.forEach(visit)
    }
    for (const f of fc.features) if ("coordinates" in f.geometry) visit(f.geometry.coordinates)
    mapAspects.set(name, ((x1 - x0) / (y1 - y0)) * 0.75)
    return fc
  })

/** world-atlas `countries-110m` (TopoJSON, served by Dashstream) without Antarctica, registered once. */
export const ensureWorldMap = (url: string): Promise<void> =>
  register(worldMapName, async () => {
    const fc = await load(url, "countries")
    return {
      ...fc,
      features: fc.features
        .filter((f) => f.id !== "010")
        .map((f) => ({ ...f, geometry: mapRings(f.geometry, foldAntimeridian) }))
    }
  })

// American Samoa, Guam, the Northern Mariana Islands and the US Virgin Islands would stretch the map across the Pacific.
const dropped = new Set(["60", "66", "69", "78"])

/** us-atlas `states-10m` with Alaska, Hawaii and Puerto Rico moved into insets ({@link usaInset}), registered once. */
export const ensureUsaMap = (url: string): Promise<void> =>
  register(usaMapName, async () => {
    const fc = await load(url, "states")
    return {
      ...fc,
      features: fc.features
        .filter((f) => !dropped.has(String(f.id)))
        .map((f) => ({
          ...f,
          geometry: mapRings(f.geometry, (ring) => ring.map(([lon, lat]) => [...usaInset(lon!, lat!)]))
        }))
    }
  })

/**
 * Sizes a map option's `geo` to the largest box of the map's aspect that fits the chart (ECharts stretches a map
 * given all four margins, and sizes `layoutSize` percentages from the shorter side).
 */
export const fitMap =
  (name: string) =>
  (option: EChartsCoreOption, width: number, height: number): EChartsCoreOption => {
    const aspect = mapAspects.get(name) ?? 2
    const size = 0.97 * (aspect >= 1 ? Math.min(width, height * aspect) : Math.min(height, width / aspect))
    const geo = (option as { geo?: object }).geo
    return { ...option, geo: { ...geo, layoutCenter: ["50%", "50%"], layoutSize: Math.max(10, size) } }
  }
