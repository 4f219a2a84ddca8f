import type { RenderContext } from "@dashstream/dashboard-web/browser"
import { useEffect, useMemo, useState } from "preact/hooks"
import type { ConsoleConfig } from "../Config.js"
import { AccountPage } from "./AccountPage.js"
import { AccountsPage } from "./AccountsPage.js"
import { api, ApiError, unauthorizedEvent } from "./api.js"
import { EditorPage } from "./EditorPage.js"
import { RotationPage } from "./RotationPage.js"
import { SignIn } from "./SignIn.js"
import { describeError, routeHref, useRoute } from "./ui.js"

type Auth =
  | { readonly state: "checking" }
  | { readonly state: "signed-out"; readonly message?: string | undefined }
  | { readonly state: "signed-in" }

/**
 * The console: checks the session (signing in first with a first-run token when the page was opened with one), then
 * shows the page the fragment names, or the sign-in form. Any 401 later (the session expired, was signed out
 * elsewhere, or the admin token changed) brings the sign-in form back; unsaved layout edits stay in memory.
 */
export const App = (props: { readonly config: ConsoleConfig; readonly firstRunToken: string | undefined }) => {
  const [auth, setAuth] = useState<Auth>({ state: "checking" })
  const route = useRoute()
  const ctx: RenderContext = useMemo(() => ({ theme: "dark", maps: props.config.maps }), [props.config])

  useEffect(() => {
    const check = async () => {
      if (props.firstRunToken !== undefined) {
        try {
          await api.signIn(props.firstRunToken)
        } catch (error) {
          const message =
            error instanceof ApiError && error.status === 401
              ? "The sign-in link's token is not valid (a restarted server makes a new one): sign in with the token."
              : `Signing in with the link failed: ${describeError(error)}`
          return setAuth({ state: "signed-out", message })
        }
      }
      try {
        await api.listAccounts()
        setAuth({ state: "signed-in" })
      } catch (error) {
        setAuth({
          state: "signed-out",
          message: error instanceof ApiError && error.status === 401 ? undefined : describeError(error)
        })
      }
    }
    void check()
    const ended = () => setAuth({ state: "signed-out", message: "Your session has ended: sign in again." })
    addEventListener(unauthorizedEvent, ended)
    return () => removeEventListener(unauthorizedEvent, ended)
  }, [])

  const signOut = async () => {
    try {
      await api.signOut()
    } finally {
      setAuth({ state: "signed-out", message: "You are signed out." })
    }
  }

  return (
    <div class="cw-app" data-auth={auth.state}>
      <header class="cw-header">
        <a class="cw-brand" href={routeHref({ page: "accounts" })}>
          Dashstream <span>console</span>
        </a>
        {auth.state === "signed-in" ? (
          <button type="button" class="cw-signout" onClick={() => void signOut()}>
            Sign out
          </button>
        ) : null}
      </header>
      <main class="cw-main">
        {auth.state === "checking" ? (
          <p class="cw-muted">Checking your session…</p>
        ) : auth.state === "signed-out" ? (
          <SignIn message={auth.message} onSignedIn={() => setAuth({ state: "signed-in" })} />
        ) : route.page === "accounts" ? (
          <AccountsPage />
        ) : route.page === "account" ? (
          <AccountPage accountId={route.accountId} />
        ) : route.page === "rotation" ? (
          <RotationPage accountId={route.accountId} rotationId={route.rotationId} />
        ) : (
          <EditorPage key={route.dashboardId} accountId={route.accountId} dashboardId={route.dashboardId} ctx={ctx} />
        )}
      </main>
    </div>
  )
}
