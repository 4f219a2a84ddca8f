import { useEffect, useState } from "preact/hooks"
import { api, type Dashboard } from "./api.js"
import { forgetViewLink, rememberViewLink, viewLink } from "./memory.js"
import { ConfirmButton, ErrorText, routeHref, Section, ShownOnce } from "./ui.js"

/**
 * The dashboards of an account (docs/api.md section 14): list, create (one tile per widget, as the server lays it out),
 * delete after a confirmation, rotate the view link (the new link shown once; the old one stops working), open the
 * view page (when this page made its link), and edit the layout.
 */
export const DashboardsPanel = (props: { readonly accountId: string }) => {
  const [dashboards, setDashboards] = useState<ReadonlyArray<Dashboard> | undefined>(undefined)
  const [loadError, setLoadError] = useState<unknown>(undefined)
  const [name, setName] = useState("")
  const [createError, setCreateError] = useState<unknown>(undefined)
  const [shown, setShown] = useState<{ label: string; url: string } | undefined>(undefined)
  const [rowError, setRowError] = useState<{ id: string; error: unknown } | undefined>(undefined)

  const load = () =>
    api.listDashboards(props.accountId).then(
      (list) => {
        setDashboards(list)
        setLoadError(undefined)
      },
      (error: unknown) => setLoadError(error)
    )
  useEffect(() => void load(), [props.accountId])

  const showLink = (label: string, d: Dashboard) => {
    if (d.url === null) return
    rememberViewLink(d.id, d.url)
    setShown({ label, url: new URL(d.url, location.href).href })
  }

  const create = async (event: Event) => {
    event.preventDefault()
    setCreateError(undefined)
    try {
      const d = await api.createDashboard(props.accountId, name)
      setName("")
      showLink(`The view link of ${d.name}.`, d)
      await load()
    } catch (error) {
      setCreateError(error)
    }
  }

  const act = async (id: string, action: () => Promise<void>) => {
    setRowError(undefined)
    try {
      await action()
      await load()
    } catch (error) {
      setRowError({ id, error })
    }
  }

  return (
    <Section title="Dashboards">
      <ErrorText error={loadError} />
      {shown === undefined ? null : (
        <ShownOnce label={shown.label} value={shown.url} href={shown.url} onDone={() => setShown(undefined)} />
      )}
      {dashboards === undefined ? (
        <p class="cw-muted">Loading…</p>
      ) : dashboards.length === 0 ? (
        <p class="cw-muted">No dashboards yet: create one below.</p>
      ) : (
        <table class="cw-table cw-dashboards">
          <thead>
            <tr>
              <th>Name</th>
              <th>Tiles</th>
              <th>Created</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {dashboards.map((d) => {
              const link = viewLink(d.id)
              return (
                <tr key={d.id} data-dashboard={d.id}>
                  <td>
                    <a href={routeHref({ page: "editor", accountId: props.accountId, dashboardId: d.id })}>{d.name}</a>
                  </td>
                  <td>{d.tiles.length}</td>
                  <td>{new Date(d.createdAt).toLocaleString()}</td>
                  <td>
                    <div class="cw-actions">
                      <a
                        class="cw-button"
                        href={routeHref({ page: "editor", accountId: props.accountId, dashboardId: d.id })}
                      >
                        Edit layout
                      </a>
                      {link === undefined ? (
                        <button
                          type="button"
                          disabled
                          title="The view link is shown only when it is made: rotate it to get a new one"
                        >
                          Open view page
                        </button>
                      ) : (
                        <a class="cw-button" href={link} target="_blank" rel="noreferrer noopener">
                          Open view page
                        </a>
                      )}
                      <ConfirmButton
                        label="Rotate view link"
                        question="The current view link stops working. Make a new one?"
                        confirmLabel="Rotate"
                        action={() =>
                          void act(d.id, async () =>
                            showLink(`The new view link of ${d.name}.`, await api.rotateViewLink(props.accountId, d.id))
                          )
                        }
                      />
                      <ConfirmButton
                        label="Delete"
                        question={`Delete the dashboard ${d.name}?`}
                        confirmLabel="Delete dashboard"
                        danger
                        action={() =>
                          void act(d.id, async () => {
                            await api.deleteDashboard(props.accountId, d.id)
                            forgetViewLink(d.id)
                          })
                        }
                      />
                      {rowError?.id === d.id ? <ErrorText error={rowError.error} /> : null}
                    </div>
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      )}
      <h3>Create a dashboard</h3>
      <form class="cw-inline-form" onSubmit={(e) => void create(e)}>
        <label>
          Name
          <input name="dashboardName" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit" class="cw-primary">
          Create dashboard
        </button>
      </form>
      <p class="cw-hint">A new dashboard has one tile per widget of the account; arrange them in its layout editor.</p>
      <ErrorText error={createError} />
    </Section>
  )
}
