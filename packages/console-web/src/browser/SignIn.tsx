import { useState } from "preact/hooks"
import { api } from "./api.js"
import { ErrorText } from "./ui.js"

/**
 * The sign-in form (docs/api.md section 14): the admin token, posted to `POST /console/session`, which sets the session
 * cookie. The token is held only by the form's field and forgotten once sent.
 */
export const SignIn = (props: { readonly message: string | undefined; readonly onSignedIn: () => void }) => {
  const [token, setToken] = useState("")
  const [error, setError] = useState<unknown>(undefined)
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      await api.signIn(token)
      setToken("")
      props.onSignedIn()
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }
  return (
    <form class="cw-signin" onSubmit={(e) => void submit(e)}>
      <h1>Sign in</h1>
      {props.message === undefined ? null : <p class="cw-muted">{props.message}</p>}
      <label>
        Admin token
        <input
          name="token"
          type="password"
          autocomplete="current-password"
          required
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
        />
      </label>
      <p class="cw-hint">
        The token configured as <code>DASHSTREAM_ADMIN_TOKEN</code>, or the link <code>serve</code> printed on its first
        run.
      </p>
      <button type="submit" class="cw-primary" disabled={busy || token === ""}>
        Sign in
      </button>
      <ErrorText error={error} />
    </form>
  )
}
