/**
 * Pure: a ring (closed list of `[longitude, latitude]`) that crosses the antimeridian (Russia's Chukotka, Fiji)
 * would be drawn by a flat map as a band across the whole world. Such a ring is folded onto the side where most of
 * its points lie: the few points on the other side are moved to longitude +-180. Other rings are returned as given.
 */
export const foldAntimeridian = <P extends ReadonlyArray<number>>(ring: ReadonlyArray<P>): ReadonlyArray<P> => {
  let crosses = false
  for (let i = 1; i < ring.length && !crosses; i++) crosses = Math.abs(ring[i]![0]! - ring[i - 1]![0]!) > 180
  if (!crosses) return ring
  const east = ring.filter((p) => p[0]! > 0).length * 2 >= ring.length
  return ring.map((p) => {
    const lon = p[0]!
    if (east && lon < -90) return [180, ...p.slice(1)] as unknown as P
    if (!east && lon > 90) return [-180, ...p.slice(1)] as unknown as P
    return p
  })
}
