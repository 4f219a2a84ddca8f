import { useMemo } from "preact/hooks"
import { api } from "./api.js"
import { intervalText } from "./rotationForm.js"
import { ListTable, routeHref, Section } from "./ui.js"
import { useViewList, ViewActions } from "./views.js"

/**
 * The rotations of an account (docs/api.md section 15.2), beside its dashboards and in the same shape: list (name, its
 * dashboards in order, interval, created), edit, open the rotation page and copy its link, rotate the link (or replace
 * one that is not kept), delete after a confirmation; "New rotation" opens the form. `changes` counts the account's
 * dashboard changes: the list is read again after each (a deleted dashboard leaves every rotation).
 */
export const RotationsPanel = (props: { readonly accountId: string; readonly changes: number }) => {
  const { accountId } = props
  const {
    items: rotations,
    loadError,
    reload
  } = useViewList(() => api.rotations.list(accountId), [accountId, props.changes])
  const { items: dashboards } = useViewList(() => api.dashboards.list(accountId), [accountId, props.changes])
  const names = useMemo(() => new Map((dashboards ?? []).map((d) => [d.id, d.name])), [dashboards])

  return (
    <Section title="Rotations">
      <p class="cw-hint">A rotation shows dashboards of the account in turn on one screen, each for its interval.</p>
      <ListTable
        items={rotations}
        loadError={loadError}
        empty="No rotations yet."
        class="cw-rotations"
        headers={["Name", "Dashboards", "Interval", "Created", ""]}
        row={(r) => {
          const href = routeHref({ page: "rotation", accountId, rotationId: r.id })
          return (
            <tr key={r.id} data-rotation={r.id}>
              <td class="cw-wrap">
                <a href={href}>{r.name}</a>
              </td>
              <td class="cw-wrap cw-rotation-order">
                {r.dashboardIds.length === 0 ? (
                  <span class="cw-muted">none</span>
                ) : dashboards === undefined ? (
                  "…"
                ) : (
                  r.dashboardIds.map((id) => names.get(id) ?? "(deleted)").join(" → ")
                )}
              </td>
              <td class="cw-nowrap">{intervalText(r.intervalSeconds)}</td>
              <td>{new Date(r.createdAt).toLocaleString()}</td>
              <td>
                <ViewActions
                  kind="rotations"
                  accountId={accountId}
                  view={r}
                  edit={{ href, label: "Edit" }}
                  onChanged={() => void reload()}
                />
              </td>
            </tr>
          )
        }}
      />
      <p>
        <a class="cw-button cw-primary" href={routeHref({ page: "rotation", accountId, rotationId: undefined })}>
          New rotation
        </a>
      </p>
    </Section>
  )
}
