import { useState } from "preact/hooks"
import { api } from "./api.js"
import { ErrorText, ListTable, routeHref, Section } from "./ui.js"
import { useViewList, ViewActions } from "./views.js"

/**
 * The dashboards of an account (docs/api.md section 14): list, create (one tile per widget, as the server lays it out),
 * delete after a confirmation, open the view page and copy its link (every answer carries it, docs/api.md section 11),
 * rotate the view link (the old one stops working), and edit the layout. `onChanged` runs after a dashboard was
 * created or deleted (a deleted dashboard leaves every rotation).
 */
export const DashboardsPanel = (props: { readonly accountId: string; readonly onChanged?: () => void }) => {
  const {
    items: dashboards,
    loadError,
    reload
  } = useViewList(() => api.dashboards.list(props.accountId), [props.accountId])
  const [name, setName] = useState("")
  const [createError, setCreateError] = useState<unknown>(undefined)
  const changed = async () => {
    await reload()
    props.onChanged?.()
  }

  const create = async (event: Event) => {
    event.preventDefault()
    setCreateError(undefined)
    try {
      await api.dashboards.create(props.accountId, { name })
      setName("")
      await changed()
    } catch (error) {
      setCreateError(error)
    }
  }

  return (
    <Section title="Dashboards">
      <ListTable
        items={dashboards}
        loadError={loadError}
        empty="No dashboards yet: create one below."
        class="cw-dashboards"
        headers={["Name", "Tiles", "Created", ""]}
        row={(d) => {
          const href = routeHref({ page: "editor", accountId: props.accountId, dashboardId: d.id })
          return (
            <tr key={d.id} data-dashboard={d.id}>
              <td class="cw-wrap">
                <a href={href}>{d.name}</a>
              </td>
              <td>{d.tiles.length}</td>
              <td>{new Date(d.createdAt).toLocaleString()}</td>
              <td>
                <ViewActions
                  kind="dashboards"
                  accountId={props.accountId}
                  view={d}
                  edit={{ href, label: "Edit layout" }}
                  onChanged={() => void changed()}
                />
              </td>
            </tr>
          )
        }}
      />
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
