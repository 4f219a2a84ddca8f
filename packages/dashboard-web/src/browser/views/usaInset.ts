/**
 * Pure: where a longitude/latitude is drawn on the USA map. Alaska, Hawaii and Puerto Rico are moved and scaled into
 * insets below the contiguous states (as printed US maps do); the same linear move applies to their outlines and to
 * the points pushed there, so a point in Anchorage lands on the Alaska inset. Everything else is unchanged.
 */
export const usaInset = (longitude: number, latitude: number): readonly [number, number] => {
  for (const inset of insets) {
    const lon = inset.wrap && longitude > 0 ? longitude - 360 : longitude
    const { from, to } = inset
    if (lon >= from.lon0 && lon <= from.lon1 && latitude >= from.lat0 && latitude <= from.lat1) {
      const scale = to.width / (from.lon1 - from.lon0)
      return [to.left + (lon - from.lon0) * scale, to.bottom + (latitude - from.lat0) * scale]
    }
  }
  return [longitude, latitude]
}

interface Inset {
  /** Alaska's Aleutians cross the antimeridian: positive longitudes are taken as west of -180. */
  readonly wrap: boolean
  readonly from: { readonly lon0: number; readonly lon1: number; readonly lat0: number; readonly lat1: number }
  readonly to: { readonly left: number; readonly bottom: number; readonly width: number }
}

const insets: ReadonlyArray<Inset> = [
  { wrap: true, from: { lon0: -188, lon1: -129.9, lat0: 51, lat1: 71.6 }, to: { left: -124, bottom: 22.2, width: 15 } },
  {
    wrap: false,
    from: { lon0: -160.6, lon1: -154.7, lat0: 18.8, lat1: 22.4 },
    to: { left: -107.5, bottom: 23.6, width: 6 }
  },
  { wrap: false, from: { lon0: -68, lon1: -65.1, lat0: 17.8, lat1: 18.6 }, to: { left: -75.5, bottom: 24.2, width: 3 } }
]
