/** The latest entry's point (entries ascending by `ts`), or `undefined` for an empty tile. */
export const latestPoint = (entries: ReadonlyArray<{ readonly point: unknown }>): unknown =>
  entries.length === 0 ? undefined : entries[entries.length - 1]!.point
