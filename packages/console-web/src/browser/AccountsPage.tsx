import { useEffect, useState } from "preact/hooks"
import { type Account, api } from "./api.js"
import { ErrorText, ListTable, routeHref, Section, ShownOnce } from "./ui.js"

/** Accounts (docs/api.md section 14): the list, and a form that creates one and shows its access key once. */
export const AccountsPage = () => {
  const [accounts, setAccounts] = useState<ReadonlyArray<Account> | undefined>(undefined)
  const [loadError, setLoadError] = useState<unknown>(undefined)
  const [name, setName] = useState("")
  const [created, setCreated] = useState<{ name: string; accessKey: string } | undefined>(undefined)
  const [createError, setCreateError] = useState<unknown>(undefined)

  const load = () =>
    api.listAccounts().then(
      (list) => {
        setAccounts(list)
        setLoadError(undefined)
      },
      (error: unknown) => setLoadError(error)
    )
  useEffect(() => void load(), [])

  const create = async (event: Event) => {
    event.preventDefault()
    setCreateError(undefined)
    try {
      const account = await api.createAccount(name.trim())
      setCreated({ name: account.name, accessKey: account.accessKey })
      setName("")
      await load()
    } catch (error) {
      setCreateError(error)
    }
  }

  return (
    <div class="cw-page">
      <h1>Accounts</h1>
      <Section title="All accounts">
        <ListTable
          items={accounts}
          loadError={loadError}
          empty="No accounts yet: create the first one below."
          class="cw-accounts"
          headers={["Name", "Id", "Created"]}
          row={(a) => (
            <tr key={a.id} data-account={a.id}>
              <td>
                <a href={routeHref({ page: "account", accountId: a.id })}>{a.name === "" ? "(no name)" : a.name}</a>
              </td>
              <td>
                <code>{a.id}</code>
              </td>
              <td>{new Date(a.createdAt).toLocaleString()}</td>
            </tr>
          )}
        />
      </Section>
      <Section title="Create an account">
        <form class="cw-inline-form" onSubmit={(e) => void create(e)}>
          <label>
            Name
            <input name="accountName" value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <button type="submit" class="cw-primary">
            Create account
          </button>
        </form>
        <ErrorText error={createError} />
        {created === undefined ? null : (
          <ShownOnce
            label={`The access key of ${created.name === "" ? "the new account" : created.name}.`}
            value={created.accessKey}
            onDone={() => setCreated(undefined)}
          />
        )}
      </Section>
    </div>
  )
}
