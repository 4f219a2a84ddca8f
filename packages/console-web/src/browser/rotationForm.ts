/**
 * Pure rules of the console's rotation form (docs/api.md section 15.2), no DOM: the body it sends, the order of its
 * dashboards, and which field a server error's `path` names. The server validates; the form sends what was typed.
 */

/** The form as typed: the name, the interval as text (seconds), the ids of the dashboards in the order shown. */
export interface RotationDraft {
  readonly name: string
  readonly interval: string
  readonly dashboardIds: ReadonlyArray<string>
}

/**
 * The body of `POST` or `PUT .../rotations` (docs/api.md section 15.2) for `draft`: `intervalSeconds` a number when
 * the text reads as one, else the text itself, which the server refuses with `path` `intervalSeconds` (the bounds are
 * the server's to check, in one place).
 */
export const rotationBody = (
  draft: RotationDraft
): { readonly name: string; readonly dashboardIds: ReadonlyArray<string>; readonly intervalSeconds: number } => {
  const text = draft.interval.trim()
  const seconds = text === "" ? Number.NaN : Number(text)
  return {
    name: draft.name,
    dashboardIds: draft.dashboardIds,
    intervalSeconds: (Number.isFinite(seconds) ? seconds : draft.interval) as number
  }
}

/** `list` with the item at `index` moved by `by` places (-1: up, 1: down); the same list when it cannot move. */
export const moved = <A>(list: ReadonlyArray<A>, index: number, by: number): ReadonlyArray<A> => {
  const to = index + by
  if (index < 0 || index >= list.length || to < 0 || to >= list.length || by === 0) return list
  const next = [...list]
  const [item] = next.splice(index, 1)
  next.splice(to, 0, item!)
  return next
}

/** `list` without the item at `index`. */
export const removedAt = <A>(list: ReadonlyArray<A>, index: number): ReadonlyArray<A> =>
  list.filter((_, i) => i !== index)

/** Where a server error's `path` points in a rotation's body: a field, one dashboard of the list, or the form. */
export type RotationErrorTarget =
  | { readonly kind: "name" }
  | { readonly kind: "interval" }
  | { readonly kind: "dashboards" }
  | { readonly kind: "dashboard"; readonly index: number }
  | { readonly kind: "form" }

/**
 * Reads the `path` of a 400 answering a rotation's `POST` or `PUT` (docs/api.md section 15.2): `name`,
 * `intervalSeconds`, `dashboardIds[3]` (dashboard 3 of the list: not one of the account's dashboards) and
 * `dashboardIds` (the list as a whole: too long); anything else, or no path, the form as a whole.
 */
export const rotationErrorTarget = (path: string | undefined): RotationErrorTarget => {
  if (path === "name") return { kind: "name" }
  if (path === "intervalSeconds") return { kind: "interval" }
  if (path === "dashboardIds") return { kind: "dashboards" }
  const one = /^dashboardIds\[(\d+)\]$/.exec(path ?? "")
  return one === null ? { kind: "form" } : { kind: "dashboard", index: Number(one[1]) }
}

/** An interval as the console shows it: `45 s`, `2 min`, `1 min 30 s`, `1 h` (whole seconds, docs/api.md 15.2). */
export const intervalText = (seconds: number): string => {
  const h = Math.floor(seconds / 3600)
  const min = Math.floor((seconds % 3600) / 60)
  const s = seconds % 60
  const parts = [h > 0 ? `${h} h` : "", min > 0 ? `${min} min` : "", s > 0 || seconds === 0 ? `${s} s` : ""]
  return parts.filter((p) => p !== "").join(" ")
}
