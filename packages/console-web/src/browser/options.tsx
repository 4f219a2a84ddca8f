/**
 * Tile options in the layout editor's inspector (docs/api.md section 15): thresholds, min/max, staleAfter and range, each an
 * editor of {@link tileOptionEditors}. The server validates (`TileOptions` and `checkStreams` in core); the
 * editors write what the operator types, a number when it reads as one (else the text, which the server refuses
 * with the field's `path`), and a 400's `path` (`tiles[1].options.thresholds[0].color`) is shown on the field it
 * names. Options a tile already carries that no editor knows are kept and saved back unchanged.
 *
 * To add one: append a {@link TileOptionEditor} to {@link tileOptionEditors}. The inspector shows every editor whose
 * `appliesTo` accepts the tile's widget type, passes it the tile's current `options` and takes the new object from
 * `onChange` (`undefined` removes the key).
 */
import {
  RANGE_MAX,
  RANGE_MIN,
  rangeTypes,
  scaleTypes,
  STALE_AFTER_MAX,
  STALE_AFTER_MIN,
  type TileOptionsData,
  thresholdColors,
  thresholdTypes
} from "@dashstream/core/tileStatus"
import type { JSX } from "preact"

/** The tile options object (docs/api.md section 15), as stored: keys this page does not know are kept as they are. */
export type TileOptions = Readonly<Record<string, unknown>>

/** A server error on one option: `at` is the rest of its `path` after `options.<key>` (`[0].color`, or `""`). */
export interface OptionError {
  readonly at: string
  readonly message: string
}

/** One option's form in the inspector. */
export interface TileOptionEditor {
  /** The option's key in `options` (`"thresholds"`, `"staleAfter"`). */
  readonly key: string
  /** What the form is titled. */
  readonly legend: string
  /** The widget types the option is allowed on (docs/api.md section 15). */
  readonly appliesTo: (type: string) => boolean
  /** The form: the tile's current options, a setter for the option's new value (`undefined` removes it), its error. */
  readonly Editor: (props: {
    readonly options: TileOptions
    readonly onChange: (value: unknown) => void
    readonly error: OptionError | undefined
  }) => JSX.Element
}

/** What a number field holds: a number when the text reads as one, nothing when empty, else the text as typed. */
export const numberOrText = (text: string): unknown => {
  const trimmed = text.trim()
  if (trimmed === "") return undefined
  const n = Number(trimmed)
  return Number.isFinite(n) ? n : text
}

const shown = (value: unknown): string => (value === undefined || value === null ? "" : String(value))

const FieldError = ({ error }: { readonly error: string | undefined }) =>
  error === undefined ? null : (
    <span class="cw-error cw-option-error" role="alert">
      {error}
    </span>
  )

/** A number field for one key of `options`. */
const numberEditor =
  (key: string, label: string, hint: string) =>
  (props: {
    readonly options: TileOptions
    readonly onChange: (value: unknown) => void
    readonly error: OptionError | undefined
  }) => (
    <label class="cw-option-field">
      {label}
      <input
        name={`option-${key}`}
        inputMode="decimal"
        value={shown(props.options[key])}
        placeholder={hint}
        aria-invalid={props.error !== undefined}
        onInput={(e) => props.onChange(numberOrText(e.currentTarget.value))}
      />
      <FieldError error={props.error?.message} />
    </label>
  )

/** A threshold row as the form holds it (`above`/`below` may be text the operator is still typing). */
type ThresholdRow = Readonly<Record<string, unknown>>

const ThresholdsEditor = (props: {
  readonly options: TileOptions
  readonly onChange: (value: unknown) => void
  readonly error: OptionError | undefined
}) => {
  const rows: ReadonlyArray<ThresholdRow> = Array.isArray(props.options["thresholds"])
    ? (props.options["thresholds"] as ReadonlyArray<ThresholdRow>)
    : []
  const set = (next: ReadonlyArray<ThresholdRow>) => props.onChange(next.length === 0 ? undefined : next)
  const change = (i: number, row: ThresholdRow) => set(rows.map((r, j) => (j === i ? row : r)))
  const rowError = /^\[(\d+)\]/.exec(props.error?.at ?? "")
  const errorRow = rowError === null ? undefined : Number(rowError[1])
  return (
    <div class="cw-thresholds">
      <p class="cw-muted cw-option-hint">The value takes the colour of the last threshold it meets.</p>
      {rows.map((row, i) => {
        const side = "below" in row && !("above" in row) ? "below" : "above"
        return (
          <div class="cw-threshold" key={i} data-index={i}>
            <select
              name={`threshold-${i}-side`}
              aria-label={`Threshold ${i + 1}: above or below`}
              value={side}
              onChange={(e) => {
                const { above: _a, below: _b, ...rest } = row
                change(i, { [e.currentTarget.value]: row[side], ...rest })
              }}
            >
              <option value="above">above</option>
              <option value="below">below</option>
            </select>
            <input
              name={`threshold-${i}-value`}
              aria-label={`Threshold ${i + 1}: value`}
              inputMode="decimal"
              value={shown(row[side])}
              aria-invalid={errorRow === i}
              onInput={(e) => change(i, { ...row, [side]: numberOrText(e.currentTarget.value) ?? "" })}
            />
            <select
              name={`threshold-${i}-color`}
              aria-label={`Threshold ${i + 1}: colour`}
              value={shown(row["color"])}
              onChange={(e) => change(i, { ...row, color: e.currentTarget.value })}
            >
              {thresholdColors.includes(row["color"] as never) ? null : <option value={shown(row["color"])}>?</option>}
              {thresholdColors.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
            <button
              type="button"
              class="cw-threshold-remove"
              aria-label={`Remove threshold ${i + 1}`}
              onClick={() => set(rows.filter((_, j) => j !== i))}
            >
              ×
            </button>
            {errorRow === i ? <FieldError error={props.error?.message} /> : null}
          </div>
        )
      })}
      {props.error !== undefined && errorRow === undefined ? <FieldError error={props.error.message} /> : null}
      <button type="button" class="cw-threshold-add" onClick={() => set([...rows, { above: 0, color: "amber" }])}>
        Add threshold
      </button>
    </div>
  )
}

/** The option editors the inspector shows, in order (docs/api.md section 15). */
export const tileOptionEditors: ReadonlyArray<TileOptionEditor> = [
  { key: "thresholds", legend: "Thresholds", appliesTo: (t) => thresholdTypes.includes(t), Editor: ThresholdsEditor },
  {
    key: "min",
    legend: "Scale minimum",
    appliesTo: (t) => scaleTypes.includes(t),
    Editor: numberEditor("min", "Min", "auto")
  },
  {
    key: "max",
    legend: "Scale maximum",
    appliesTo: (t) => scaleTypes.includes(t),
    Editor: numberEditor("max", "Max", "auto")
  },
  {
    key: "staleAfter",
    legend: "Stale after",
    appliesTo: () => true,
    Editor: numberEditor("staleAfter", "Seconds", `${STALE_AFTER_MIN} to ${STALE_AFTER_MAX}, or none`)
  },
  {
    key: "range",
    legend: "Time range",
    appliesTo: (t) => rangeTypes.includes(t),
    Editor: numberEditor("range", "Seconds shown", `${RANGE_MIN} to ${RANGE_MAX} (604800 = 7 days), or live`)
  }
]

/** `options` with `key` set to `value` (removed when `undefined`); `undefined` when nothing is left. */
export const withOption = (options: TileOptions | undefined, key: string, value: unknown): TileOptions | undefined => {
  const next: Record<string, unknown> = { ...options }
  if (value === undefined) delete next[key]
  else next[key] = value
  return Object.keys(next).length === 0 ? undefined : next
}

/**
 * Which editor a server error's field names: `options.thresholds[0].color` is the `thresholds` editor at
 * `[0].color`; `undefined` for a field outside `options` (or `options` itself).
 */
export const optionErrorOf = (
  field: string,
  message: string
): { readonly key: string; readonly error: OptionError } | undefined => {
  const m = /^options\.([A-Za-z_$][\w$]*)(.*)$/.exec(field)
  return m === null ? undefined : { key: m[1]!, error: { at: m[2]!, message } }
}

const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v)

/**
 * The options the editor's live preview draws with: the parts of a draft that are well formed (the server checks the
 * rest on save), so a half-typed threshold never breaks the tile's drawing.
 */
export const previewOptions = (options: TileOptions | undefined): TileOptionsData | undefined => {
  if (options === undefined) return undefined
  const thresholds = Array.isArray(options["thresholds"])
    ? (options["thresholds"] as ReadonlyArray<ThresholdRow>).flatMap((t) =>
        thresholdColors.includes(t["color"] as never) && (isNumber(t["above"]) || isNumber(t["below"]))
          ? [
              isNumber(t["above"])
                ? { above: t["above"], color: t["color"] as (typeof thresholdColors)[number] }
                : { below: t["below"] as number, color: t["color"] as (typeof thresholdColors)[number] }
            ]
          : []
      )
    : undefined
  const min = isNumber(options["min"]) ? options["min"] : undefined
  const max = isNumber(options["max"]) ? options["max"] : undefined
  const scale = min !== undefined && max !== undefined && !(min < max) ? {} : { min, max }
  const staleAfter = options["staleAfter"]
  const range = options["range"]
  return {
    thresholds,
    ...scale,
    staleAfter:
      Number.isInteger(staleAfter) && (staleAfter as number) >= STALE_AFTER_MIN ? (staleAfter as number) : undefined,
    range:
      Number.isInteger(range) && (range as number) >= RANGE_MIN && (range as number) <= RANGE_MAX
        ? (range as number)
        : undefined
  }
}
