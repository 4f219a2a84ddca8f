import { MAX_INTERVAL_SECONDS, MAX_ROTATION_DASHBOARDS, MIN_INTERVAL_SECONDS } from "@dashstream/core/rotationLimits"
import { useEffect, useMemo, useState } from "preact/hooks"
import { api, ApiError, type Dashboard, type Rotation } from "./api.js"
import {
  moved,
  removedAt,
  rotationBody,
  type RotationDraft,
  rotationErrorTarget,
  type RotationErrorTarget
} from "./rotationForm.js"
import { ConfirmButton, Crumbs, ErrorText, Field, FieldMessage, routeHref, useAccountName } from "./ui.js"
import { ShareLink } from "./ViewLink.js"

/** The interval a new rotation's form starts with, in seconds (the operator changes it before creating). */
const suggestedInterval = 30

const draftOf = (r: Rotation): RotationDraft => ({
  name: r.name,
  interval: String(r.intervalSeconds),
  dashboardIds: r.dashboardIds
})

const sameDraft = (a: RotationDraft, b: RotationDraft): boolean =>
  a.name === b.name &&
  a.interval.trim() === b.interval.trim() &&
  a.dashboardIds.length === b.dashboardIds.length &&
  a.dashboardIds.every((id, i) => id === b.dashboardIds[i])

/** A 400's message on the field its `path` names. */
interface FieldError {
  readonly target: RotationErrorTarget
  readonly message: string
}

/** The message of `error` when it is on the field `is` accepts, else `undefined`. */
const on = (error: FieldError | undefined, is: (t: RotationErrorTarget) => boolean): string | undefined =>
  error !== undefined && is(error.target) ? error.message : undefined

/**
 * A rotation's page (docs/api.md section 15.2), made and edited like a dashboard: its name, its interval (whole
 * seconds, the documented bounds beside the field) and its dashboards, picked from the account's, in order (moved up
 * and down, removed; one may be shown more than once). Create (`POST`) or Save (`PUT`) sends the form; a 400 is shown on
 * the field its `path` names (`name`, `intervalSeconds`, `dashboardIds[2]`) and the form is kept. A saved rotation's
 * share link is opened, copied and rotated here (or replaced when it is not kept), and the rotation deleted.
 * `rotationId` undefined: a new rotation.
 */
export const RotationPage = (props: { readonly accountId: string; readonly rotationId: string | undefined }) => {
  const { accountId, rotationId } = props
  const accountName = useAccountName(accountId)
  const [dashboards, setDashboards] = useState<ReadonlyArray<Dashboard> | undefined>(undefined)
  const [saved, setSaved] = useState<Rotation | undefined>(undefined)
  const [draft, setDraft] = useState<RotationDraft | undefined>(undefined)
  const [loadError, setLoadError] = useState<unknown>(undefined)
  const [fieldError, setFieldError] = useState<FieldError | undefined>(undefined)
  const [formError, setFormError] = useState<unknown>(undefined)
  const [linkError, setLinkError] = useState<unknown>(undefined)
  const [notice, setNotice] = useState<string | undefined>(undefined)
  const [saving, setSaving] = useState(false)
  const [adding, setAdding] = useState("")

  useEffect(() => {
    let live = true
    Promise.all([
      api.dashboards.list(accountId),
      rotationId === undefined ? undefined : api.rotations.get(accountId, rotationId)
    ]).then(
      ([list, rotation]) => {
        if (!live) return
        setDashboards(list)
        setSaved(rotation)
        setDraft((d) =>
          rotation !== undefined
            ? draftOf(rotation)
            : (d ?? { name: "", interval: String(suggestedInterval), dashboardIds: [] })
        )
        setLoadError(undefined)
      },
      (error: unknown) => live && setLoadError(error)
    )
    return () => {
      live = false
    }
  }, [accountId, rotationId])

  const names = useMemo(() => new Map((dashboards ?? []).map((d) => [d.id, d.name])), [dashboards])
  const dirty = draft !== undefined && (saved === undefined || !sameDraft(draft, draftOf(saved)))

  const edit = (change: (d: RotationDraft) => RotationDraft, clears: (t: RotationErrorTarget) => boolean) => {
    setDraft((d) => d && change(d))
    setFieldError((e) => (e !== undefined && (clears(e.target) || e.target.kind === "dashboard") ? undefined : e))
    setNotice(undefined)
  }
  // A text field of the draft: its value, invalid while the server's message is on it, and typing (which clears it).
  const draftInput = (d: RotationDraft, field: "name" | "interval") => ({
    value: d[field],
    "aria-invalid": on(fieldError, (t) => t.kind === field) !== undefined,
    onInput: (e: { readonly currentTarget: HTMLInputElement }) => {
      const value = e.currentTarget.value
      edit(
        (d) => ({ ...d, [field]: value }),
        (t) => t.kind === field
      )
    }
  })
  const editList = (change: (ids: ReadonlyArray<string>) => ReadonlyArray<string>) =>
    edit(
      (d) => ({ ...d, dashboardIds: change(d.dashboardIds) }),
      (t) => t.kind === "dashboards"
    )

  const save = async (event: Event) => {
    event.preventDefault()
    if (draft === undefined || saving) return
    setSaving(true)
    setFieldError(undefined)
    setFormError(undefined)
    setNotice(undefined)
    try {
      const body = rotationBody(draft)
      const rotation =
        rotationId === undefined
          ? await api.rotations.create(accountId, body)
          : await api.rotations.save(accountId, rotationId, body)
      setSaved(rotation)
      setDraft(draftOf(rotation))
      setNotice(rotationId === undefined ? "Created." : "Saved.")
      // The new rotation's own page, in place of the form's address (Back goes to the account).
      if (rotationId === undefined)
        location.replace(routeHref({ page: "rotation", accountId, rotationId: rotation.id }))
    } catch (error) {
      const target = error instanceof ApiError && error.status === 400 ? rotationErrorTarget(error.path) : undefined
      if (target !== undefined && target.kind !== "form")
        setFieldError({ target, message: (error as ApiError).message })
      else setFormError(error)
    } finally {
      setSaving(false)
    }
  }

  const linkAction = async (action: () => Promise<void>) => {
    setLinkError(undefined)
    try {
      await action()
    } catch (error) {
      setLinkError(error)
    }
  }

  const title = rotationId === undefined ? "New rotation" : saved?.name
  return (
    <div class="cw-page cw-rotation-page">
      <Crumbs account={{ id: accountId, name: accountName }} viewName={title} />
      <h1 class="cw-wrap">{title ?? "Rotation"}</h1>
      <ErrorText error={loadError} />
      {saved === undefined ? null : (
        <div class="cw-actions cw-rotation-link">
          <ShareLink
            url={saved.url}
            renew={() => void linkAction(async () => setSaved(await api.rotations.newLink(accountId, saved.id)))}
          />
          <ConfirmButton
            label="Delete"
            question={`Delete the rotation ${saved.name}?`}
            confirmLabel="Delete rotation"
            danger
            action={() =>
              void linkAction(async () => {
                await api.rotations.remove(accountId, saved.id)
                location.hash = routeHref({ page: "account", accountId })
              })
            }
          />
          <ErrorText error={linkError} />
        </div>
      )}
      {draft === undefined ? (
        loadError === undefined ? (
          <p class="cw-muted">Loading…</p>
        ) : null
      ) : (
        <form class="cw-section cw-rotation-form" noValidate onSubmit={(e) => void save(e)}>
          <Field label="Name" message={on(fieldError, (t) => t.kind === "name")}>
            <input name="rotationName" {...draftInput(draft, "name")} />
          </Field>
          <Field
            label={`Seconds each dashboard is shown (${MIN_INTERVAL_SECONDS} to ${MAX_INTERVAL_SECONDS})`}
            message={on(fieldError, (t) => t.kind === "interval")}
          >
            <input
              name="intervalSeconds"
              type="number"
              inputMode="numeric"
              min={MIN_INTERVAL_SECONDS}
              max={MAX_INTERVAL_SECONDS}
              step={1}
              {...draftInput(draft, "interval")}
            />
          </Field>
          <fieldset class="cw-rotation-dashboards">
            <legend>Dashboards, in the order shown (at most {MAX_ROTATION_DASHBOARDS})</legend>
            <FieldMessage message={on(fieldError, (t) => t.kind === "dashboards")} />
            {draft.dashboardIds.length === 0 ? (
              <p class="cw-hint">
                None yet: the rotation page says "This rotation has no dashboards" until you add one.
              </p>
            ) : (
              <ol class="cw-rotation-list">
                {draft.dashboardIds.map((id, i) => {
                  const message = on(fieldError, (t) => t.kind === "dashboard" && t.index === i)
                  const name = names.get(id)
                  return (
                    <li key={`${i}-${id}`} data-index={i} data-dashboard={id} aria-invalid={message !== undefined}>
                      <span class="cw-rotation-name">
                        {name ?? <span class="cw-error">(no longer a dashboard of this account)</span>}
                      </span>
                      <span class="cw-rotation-moves">
                        <button
                          type="button"
                          aria-label="Move up"
                          title="Move up"
                          disabled={i === 0}
                          onClick={() => editList((ids) => moved(ids, i, -1))}
                        >
                          ↑
                        </button>
                        <button
                          type="button"
                          aria-label="Move down"
                          title="Move down"
                          disabled={i === draft.dashboardIds.length - 1}
                          onClick={() => editList((ids) => moved(ids, i, 1))}
                        >
                          ↓
                        </button>
                        <button
                          type="button"
                          class="cw-danger-outline"
                          onClick={() => editList((ids) => removedAt(ids, i))}
                        >
                          Remove
                        </button>
                      </span>
                      <FieldMessage message={message} />
                    </li>
                  )
                })}
              </ol>
            )}
            <div class="cw-inline-form cw-rotation-add">
              <label>
                Add a dashboard
                <select name="addDashboard" value={adding} onChange={(e) => setAdding(e.currentTarget.value)}>
                  <option value="">Choose a dashboard…</option>
                  {(dashboards ?? []).map((d) => (
                    <option key={d.id} value={d.id}>
                      {d.name}
                    </option>
                  ))}
                </select>
              </label>
              <button type="button" disabled={adding === ""} onClick={() => editList((ids) => [...ids, adding])}>
                Add dashboard
              </button>
            </div>
          </fieldset>
          <div class="cw-inline-form">
            <button type="submit" class="cw-primary cw-save" disabled={saving || !dirty}>
              {saving ? "Saving…" : rotationId === undefined ? "Create rotation" : "Save"}
            </button>
            <span class="cw-save-state" data-dirty={String(dirty && saved !== undefined)} role="status">
              {dirty && saved !== undefined ? "Unsaved changes" : (notice ?? "")}
            </span>
          </div>
          <ErrorText error={formError} />
        </form>
      )}
    </div>
  )
}
