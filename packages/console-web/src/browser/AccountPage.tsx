import { useEffect, useState } from "preact/hooks"
import { AlertsPanel } from "./AlertsPanel.js"
import { type Account, api } from "./api.js"
import { DashboardsPanel } from "./DashboardsPanel.js"
import { RotationsPanel } from "./RotationsPanel.js"
import { accountLabel, Crumbs, ErrorText, Section, ShownOnce } from "./ui.js"
import { WidgetsPanel } from "./WidgetsPanel.js"

/** One account (docs/api.md section 14): issue a new access key, its widgets, its dashboards, its rotations, its alerts. */
export const AccountPage = (props: { readonly accountId: string }) => {
  const [account, setAccount] = useState<Account | undefined>(undefined)
  const [loadError, setLoadError] = useState<unknown>(undefined)
  // Dashboards created or deleted: the rotations (their names, and a deleted one's place) are read again.
  const [dashboardChanges, setDashboardChanges] = useState(0)
  useEffect(() => {
    api.listAccounts().then(
      (list) => {
        const found = list.find((a) => a.id === props.accountId)
        setAccount(found)
        setLoadError(found === undefined ? new Error("There is no account with this id.") : undefined)
      },
      (error: unknown) => setLoadError(error)
    )
  }, [props.accountId])

  return (
    <div class="cw-page">
      <Crumbs account={{ id: props.accountId, name: account?.name }} />
      <h1>{account === undefined ? "Account" : accountLabel(account.name)}</h1>
      <p class="cw-muted">
        Account <code>{props.accountId}</code>
      </p>
      <ErrorText error={loadError} />
      <AccessKeys accountId={props.accountId} />
      <WidgetsPanel accountId={props.accountId} />
      <DashboardsPanel accountId={props.accountId} onChanged={() => setDashboardChanges((n) => n + 1)} />
      <RotationsPanel accountId={props.accountId} changes={dashboardChanges} />
      <AlertsPanel accountId={props.accountId} />
    </div>
  )
}

/** Issues a new access key, optionally revoking the account's others; the key is shown once. */
const AccessKeys = (props: { readonly accountId: string }) => {
  const [revokeOthers, setRevokeOthers] = useState(false)
  const [key, setKey] = useState<{ value: string; revoked: boolean } | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const issue = async (event: Event) => {
    event.preventDefault()
    setError(undefined)
    try {
      setKey({ value: await api.newAccessKey(props.accountId, revokeOthers), revoked: revokeOthers })
      setRevokeOthers(false)
    } catch (e) {
      setError(e)
    }
  }
  return (
    <Section title="Access keys">
      <p class="cw-hint">Keys are stored only as digests: a new key is shown once, here.</p>
      <form class="cw-inline-form" onSubmit={(e) => void issue(e)}>
        <label class="cw-check">
          <input
            type="checkbox"
            name="revokeOthers"
            checked={revokeOthers}
            onChange={(e) => setRevokeOthers(e.currentTarget.checked)}
          />
          Revoke the account's other keys
        </label>
        <button type="submit" class="cw-primary">
          Issue a new key
        </button>
      </form>
      <ErrorText error={error} />
      {key === undefined ? null : (
        <ShownOnce
          label={key.revoked ? "The new access key; every other key of the account is revoked." : "The new access key."}
          value={key.value}
          onDone={() => setKey(undefined)}
        />
      )}
    </Section>
  )
}
