import type { RenderContext } from "@dashstream/dashboard-web/browser"
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks"
import { api, ApiError, type Dashboard, type TileJson, type Widget } from "./api.js"
import { GridEditor, type StreamInfo } from "./GridEditor.js"
import { type Cell, errorTarget, firstFreeCell, sameLayout } from "./layout.js"
import { type Draft, draftOf, keepDraft } from "./memory.js"
import { ViewLink } from "./ViewLink.js"
import { optionErrorOf, tileOptionEditors, type TileOptions, withOption } from "./options.js"
import { ConfirmButton, Crumbs, describeError, ErrorText, useAccountName } from "./ui.js"

/** How often the editor re-reads the account's widgets for their newest entries (milliseconds). */
const liveMs = 2000

let nextKey = 0
const newKey = () => `t${++nextKey}`

/** The editor's layout of a stored dashboard; keys are taken by index from `keysFrom` when given. */
const draftOfDashboard = (d: Dashboard, keysFrom?: Draft): Draft => ({
  name: d.name,
  tiles: d.tiles.map((tile, i) => ({ key: keysFrom?.tiles[i]?.key ?? newKey(), tile }))
})

/** `draft` with the cells the grid reports; the same object when nothing moved (so nothing redraws). */
const withCells = (draft: Draft, cells: ReadonlyMap<string, Cell>): Draft => {
  let changed = false
  const tiles = draft.tiles.map((t) => {
    const c = cells.get(t.key)
    if (c === undefined || (c.x === t.tile.x && c.y === t.tile.y && c.w === t.tile.w && c.h === t.tile.h)) return t
    changed = true
    return { key: t.key, tile: { ...t.tile, x: c.x, y: c.y, w: c.w, h: c.h } }
  })
  return changed ? { ...draft, tiles } : draft
}

const withTile = (draft: Draft, key: string, change: (tile: TileJson) => TileJson): Draft => ({
  ...draft,
  tiles: draft.tiles.map((t) => (t.key === key ? { key, tile: change(t.tile) } : t))
})

/** `tile` without the field `field` (an emptied title, options left empty). */
const without = (tile: TileJson, field: string): TileJson => {
  const { [field]: _, ...rest } = tile
  return rest as TileJson
}

const dropKey = <V,>(map: ReadonlyMap<string, V>, key: string): ReadonlyMap<string, V> => {
  if (!map.has(key)) return map
  const next = new Map(map)
  next.delete(key)
  return next
}

/**
 * The layout editor (docs/api.md section 14): the dashboard on its 12-column grid with live data, drawn by the view
 * page's renderers; tiles dragged and resized with the mouse or the keyboard, added from the account's widgets and
 * removed, their titles and options edited in the inspector. Save stores the layout with `PUT`; a 400 is shown on
 * the tile its `path` names (or on the name), and the unsaved layout is kept, also across leaving the editor.
 */
export const EditorPage = (props: {
  readonly accountId: string
  readonly dashboardId: string
  readonly ctx: RenderContext
}) => {
  const { accountId, dashboardId } = props
  const [saved, setSaved] = useState<Dashboard | undefined>(undefined)
  const accountName = useAccountName(accountId)
  const [draft, setDraft] = useState<Draft | undefined>(undefined)
  const [widgets, setWidgets] = useState<ReadonlyArray<Widget>>([])
  const [selected, setSelected] = useState<string | undefined>(undefined)
  // A 400's message on the tile its path names, with the field inside the tile (`options.thresholds[0].color`).
  const [fieldErrors, setTileErrors] = useState<
    ReadonlyMap<string, { readonly field: string; readonly message: string }>
  >(new Map())
  const tileErrors = useMemo(
    () => new Map([...fieldErrors].map(([key, e]) => [key, e.field === "" ? e.message : `${e.field}: ${e.message}`])),
    [fieldErrors]
  )
  const [nameError, setNameError] = useState<string | undefined>(undefined)
  const [saveError, setSaveError] = useState<unknown>(undefined)
  const [loadError, setLoadError] = useState<unknown>(undefined)
  const [saving, setSaving] = useState(false)
  const [notice, setNotice] = useState<string | undefined>(undefined)
  const [adding, setAdding] = useState("")
  const gridHost = useRef<HTMLDivElement>(null)
  const editor = useRef<GridEditor | undefined>(undefined)
  const focusNext = useRef<string | undefined>(undefined)

  useEffect(() => {
    let live = true
    Promise.all([api.dashboards.get(accountId, dashboardId), api.listWidgets(accountId)]).then(
      ([d, w]) => {
        if (!live) return
        setSaved(d)
        setWidgets(w)
        setDraft(draftOf(dashboardId) ?? draftOfDashboard(d))
      },
      (error: unknown) => live && setLoadError(error)
    )
    const timer = setInterval(() => {
      api.listWidgets(accountId).then(
        (w) => live && setWidgets(w),
        () => {}
      )
    }, liveMs)
    return () => {
      live = false
      clearInterval(timer)
    }
  }, [accountId, dashboardId])

  const streams = useMemo(
    () => new Map<string, StreamInfo>(widgets.map((w) => [w.streamName, { type: w.type, latest: w.latest }])),
    [widgets]
  )
  const dirty =
    saved !== undefined &&
    draft !== undefined &&
    (draft.name !== saved.name ||
      !sameLayout(
        draft.tiles.map((t) => t.tile),
        saved.tiles
      ))

  useEffect(() => {
    if (draft !== undefined) keepDraft(dashboardId, dirty ? draft : undefined)
  }, [draft, dirty])

  const remove = (key: string) => {
    setDraft((d) => d && { ...d, tiles: d.tiles.filter((t) => t.key !== key) })
    setSelected((s) => (s === key ? undefined : s))
    setTileErrors((e) => dropKey(e, key))
  }

  // The grid exists once the layout is loaded, for as long as the editor is open. It is brought in line with the
  // layout in layout effects, run in the same task as the render: a deferred effect would hand it a layout that a
  // key press in between has already changed, and move the tile back.
  useLayoutEffect(() => {
    if (draft === undefined || gridHost.current === null || editor.current !== undefined) return
    editor.current = new GridEditor(gridHost.current, props.ctx, {
      onCells: (cells) => setDraft((d) => d && withCells(d, cells)),
      onSelect: (key) => setSelected(key),
      onRemove: remove
    })
  }, [draft !== undefined])
  useEffect(
    () => () => {
      editor.current?.destroy()
      editor.current = undefined
    },
    []
  )
  useLayoutEffect(() => {
    if (draft === undefined || editor.current === undefined) return
    editor.current.sync(draft.tiles, streams, selected, tileErrors)
    if (focusNext.current !== undefined) {
      editor.current.focus(focusNext.current)
      focusNext.current = undefined
    }
  }, [draft, streams, selected, tileErrors])

  const save = async () => {
    if (draft === undefined || saving) return
    const sent = draft
    setSaving(true)
    setSaveError(undefined)
    setNameError(undefined)
    setNotice(undefined)
    try {
      const d = await api.dashboards.save(accountId, dashboardId, {
        name: sent.name,
        tiles: sent.tiles.map((t) => t.tile)
      })
      setSaved(d)
      // Edits made while the save was under way stay as they are (and stay unsaved).
      setDraft((current) => (current === sent ? draftOfDashboard(d, sent) : current))
      setTileErrors(new Map())
      setNotice("Saved.")
    } catch (error) {
      setSaveError(error)
      if (error instanceof ApiError && error.status === 400) {
        const target = errorTarget(error.path)
        const tile = target.kind === "tile" ? sent.tiles[target.index] : undefined
        if (target.kind === "tile" && tile !== undefined) {
          setTileErrors(new Map([[tile.key, { field: target.field, message: error.message }]]))
          setSelected(tile.key)
          focusNext.current = tile.key
        } else if (target.kind === "name") {
          setNameError(error.message)
        }
      }
    } finally {
      setSaving(false)
    }
  }

  // Ctrl+S (or Cmd+S) saves. The listener is added once and calls the save of the latest render: a listener of an
  // earlier render would save the layout as it was before the last key press.
  const latestSave = useRef(save)
  latestSave.current = save
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key === "s") {
        event.preventDefault()
        void latestSave.current()
      }
    }
    addEventListener("keydown", onKey)
    return () => removeEventListener("keydown", onKey)
  }, [])

  const add = () => {
    if (draft === undefined || adding === "") return
    const key = newKey()
    const cell = firstFreeCell(
      draft.tiles.map((t) => t.tile),
      3,
      2
    )
    setDraft({ ...draft, tiles: [...draft.tiles, { key, tile: { streamName: adding, ...cell } }] })
    setSelected(key)
    focusNext.current = key
  }

  const revert = () => {
    if (saved === undefined) return
    setDraft(draftOfDashboard(saved))
    setNotice(undefined)
    setTileErrors(new Map())
    setNameError(undefined)
    setSaveError(undefined)
    setSelected(undefined)
  }

  const chosen = draft?.tiles.find((t) => t.key === selected)

  return (
    <div class="cw-page cw-editor-page">
      <Crumbs account={{ id: accountId, name: accountName }} viewName={saved?.name} />
      <ErrorText error={loadError} />
      {draft === undefined ? (
        loadError === undefined ? (
          <p class="cw-muted">Loading…</p>
        ) : null
      ) : (
        <>
          <div class="cw-toolbar">
            <label class="cw-name-field">
              Dashboard name
              <input
                name="dashboardName"
                value={draft.name}
                aria-invalid={nameError !== undefined}
                onInput={(e) => {
                  const name = e.currentTarget.value
                  setDraft((d) => d && { ...d, name })
                  setNameError(undefined)
                }}
              />
              {nameError === undefined ? null : (
                <span class="cw-error" role="alert">
                  {nameError}
                </span>
              )}
            </label>
            <button type="button" class="cw-primary cw-save" disabled={!dirty || saving} onClick={() => void save()}>
              {saving ? "Saving…" : "Save"}
            </button>
            <span class="cw-save-state" data-dirty={String(dirty)} role="status">
              {dirty ? "Unsaved changes" : (notice ?? "No changes")}
            </span>
            {dirty ? (
              <ConfirmButton
                label="Discard changes"
                question="Go back to the saved layout?"
                confirmLabel="Discard"
                danger
                action={revert}
              />
            ) : null}
            <span class="cw-spacer" />
            {saved === undefined ? null : <ViewLink url={saved.url} copy={false} />}
          </div>
          {saveError === undefined ? null : (
            <p class="cw-error cw-save-error" role="alert">
              The server refused the layout: {describeError(saveError)}
            </p>
          )}
          <div class="cw-editor">
            <div class="cw-grid-wrap" ref={gridHost} role="listbox" aria-label="Tiles" />
            <aside class="cw-inspector" aria-label="Tile">
              <div class="cw-add">
                <label>
                  Add a tile
                  <select name="addTile" value={adding} onChange={(e) => setAdding(e.currentTarget.value)}>
                    <option value="">Choose a widget…</option>
                    {widgets.map((w) => (
                      <option key={w.streamName} value={w.streamName}>
                        {w.streamName} ({w.type})
                      </option>
                    ))}
                  </select>
                </label>
                <button type="button" disabled={adding === ""} onClick={add}>
                  Add tile
                </button>
              </div>
              {chosen === undefined ? (
                <p class="cw-hint">
                  Select a tile (click it, or Tab to it) to edit its title and options. Drag a tile to move it, its
                  corner to resize it; arrow keys move the selected tile, Shift+arrows resize it, Delete removes it.
                </p>
              ) : (
                <Inspector
                  key={chosen.key}
                  tile={chosen.tile}
                  type={streams.get(chosen.tile.streamName)?.type}
                  error={fieldErrors.get(chosen.key)}
                  onTitle={(title) => {
                    setDraft(
                      (d) => d && withTile(d, chosen.key, (t) => (title === "" ? without(t, "title") : { ...t, title }))
                    )
                    setTileErrors((e) => dropKey(e, chosen.key))
                  }}
                  onOptions={(options) => {
                    setDraft(
                      (d) =>
                        d &&
                        withTile(d, chosen.key, (t) =>
                          options === undefined ? without(t, "options") : { ...t, options }
                        )
                    )
                    setTileErrors((e) => dropKey(e, chosen.key))
                  }}
                  onRemove={() => remove(chosen.key)}
                />
              )}
            </aside>
          </div>
        </>
      )}
    </div>
  )
}

/** The selected tile's form: title, options (those registered for its type), place, remove. */
const Inspector = (props: {
  readonly tile: TileJson
  readonly type: string | undefined
  readonly error: { readonly field: string; readonly message: string } | undefined
  readonly onTitle: (title: string) => void
  readonly onOptions: (options: TileOptions | undefined) => void
  readonly onRemove: () => void
}) => {
  const { tile, type } = props
  const editors = type === undefined ? [] : tileOptionEditors.filter((e) => e.appliesTo(type))
  const options = tile.options ?? {}
  const optionError = props.error === undefined ? undefined : optionErrorOf(props.error.field, props.error.message)
  // An error on an option an editor shows is shown on its field; any other on the form.
  const onEditor = optionError !== undefined && editors.some((e) => e.key === optionError.key)
  return (
    <div class="cw-tile-form">
      <h3>{tile.title ?? tile.streamName}</h3>
      <p class="cw-muted">
        Stream <code>{tile.streamName}</code>{" "}
        {type === undefined ? <span class="cw-error">(no such widget)</span> : <>({type})</>}
      </p>
      {props.error === undefined || onEditor ? null : (
        <p class="cw-error" role="alert">
          {props.error.field === "" ? props.error.message : `${props.error.field}: ${props.error.message}`}
        </p>
      )}
      <label>
        Title
        <input
          name="tileTitle"
          value={tile.title ?? ""}
          placeholder={tile.streamName}
          onInput={(e) => props.onTitle(e.currentTarget.value)}
        />
      </label>
      {editors.map(({ key, legend, Editor }) => (
        <fieldset key={key} class="cw-option" data-option={key}>
          <legend>{legend}</legend>
          <Editor
            options={options}
            error={optionError?.key === key ? optionError.error : undefined}
            onChange={(value) => props.onOptions(withOption(tile.options, key, value))}
          />
        </fieldset>
      ))}
      <p class="cw-muted cw-place">
        Column {tile.x + 1}, row {tile.y + 1}; {tile.w} × {tile.h} cells
      </p>
      <button type="button" class="cw-danger-outline" onClick={props.onRemove}>
        Remove tile
      </button>
    </div>
  )
}
