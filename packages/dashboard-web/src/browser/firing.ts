/**
 * Firing alert rules on the tiles (docs/api.md section 11.5): the snapshot's `firing` and each `event: alerts` say,
 * for every tile's stream with firing rules, their names. A tile of such a stream gets `data-firing` (the names),
 * which style.css draws as an outline in the alert colour and the names at the tile's foot.
 */

let firing: Readonly<Record<string, unknown>> = {}

/** Marks every tile on the page by the firing rules last received (call it after tiles are made or replaced). */
export const showFiring = (): void => {
  for (const tile of document.querySelectorAll<HTMLElement>(".ds-tile[data-stream]")) {
    const names = firing[tile.dataset["stream"]!]
    if (Array.isArray(names) && names.length > 0) tile.dataset["firing"] = names.join(" \u00b7 ")
    else delete tile.dataset["firing"]
  }
}

/** Takes the `firing` object of a snapshot or an `alerts` event (anything else is ignored) and shows it. */
export const setFiring = (raw: unknown): void => {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return
  firing = raw as Record<string, unknown>
  showFiring()
}
