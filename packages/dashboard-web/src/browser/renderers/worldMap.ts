import { view } from "../views/worldMap.js"
import { ensureWorldMap, fitMap } from "./atlas.js"
import { worldMapName } from "../views/map.js"
import { chartRenderer } from "./chart.js"

/** world-map: markers on the offline world outline (loaded once from the page's own assets). */
export const renderer = chartRenderer(view, (ctx) => ensureWorldMap(ctx.maps.world), fitMap(worldMapName))
