import { view } from "../views/usaMap.js"
import { ensureUsaMap, fitMap } from "./atlas.js"
import { usaMapName } from "../views/map.js"
import { chartRenderer } from "./chart.js"

/** usa-map: markers on the offline USA outline (loaded once from the page's own assets). */
export const renderer = chartRenderer(view, (ctx) => ensureUsaMap(ctx.maps.usa), fitMap(usaMapName))
