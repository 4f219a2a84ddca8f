import { useEffect, useState } from "preact/hooks"
import { api, type Dashboard } from "./api.js"
import { ConfirmButton, ErrorText, routeHref, Section } from "./ui.js"
import { ViewLink } from "./ViewLink.js"

/**
 * The dashboards of an account (docs/api.md section 14): list, create (one tile per widget, as the server lays it out),
 * delete after a confirmation, open the view page and copy its link (every answer carries it, docs/api.md section 11),
 * rotate the view link (the old one stops working), and edit the layout.
 */
export const DashboardsPanel = (props: { readonly accountId: string }) => {
  const [dashboards, setDashboards] = useState<ReadonlyArray<Dashboard> | undefined>(undefined)
  const [loadError, setLoadError] = useState<unknown>(undefined)
  const [name, setName] = useState("")
  const [createError, setCreateError] = useState<unknown>(undefined)
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

  const create = async (event: Event) => {
    event.preventDefault()
    setCreateError(undefined)
    try {
      await api.createDashboard(props.accountId, name)
      setName("")
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
                      <ViewLink url={d.url} />
                      <ConfirmButton
                        label="Rotate view link"
                        question="The current view link stops working. Make a new one?"
                        confirmLabel="Rotate"
                        action={() =>
                          void act(d.id, async () => void (await api.rotateViewLink(props.accountId, d.id)))
                        }
                      />
                      <ConfirmButton
                        label="Delete"
                        question={`Delete the dashboard ${d.name}?`}
                        confirmLabel="Delete dashboard"
                        danger
                        action={() => void act(d.id, () => api.deleteDashboard(props.accountId, d.id))}
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
