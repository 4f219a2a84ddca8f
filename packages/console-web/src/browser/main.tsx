/**
 * The console page (docs/api.md section 14): an operator runs the whole service from here, through the admin API and
 * the console session. Takes a first-run token out of the fragment before anything else (see `session.ts`), reads
 * the configuration from `#ds-console`, and draws the app.
 */
import { render } from "preact"
import type { ConsoleConfig } from "../Config.js"
import { App } from "./App.js"
import { hasDrafts } from "./memory.js"
import { fragmentToken } from "./session.js"

// The first-run link's token leaves the address bar (same path and query, no fragment, no new history entry) before
// anything else runs; the app posts it to the session endpoint and keeps it nowhere.
const firstRunToken = fragmentToken(location.hash)
if (firstRunToken !== undefined) history.replaceState(history.state, "", `${location.pathname}${location.search}`)

const start = (): void => {
  const config = JSON.parse(document.getElementById("ds-console")?.textContent ?? "{}") as ConsoleConfig
  document.body.replaceChildren()
  render(<App config={config} firstRunToken={firstRunToken} />, document.body)
}

// A layout with unsaved changes: the browser asks before the page is closed or reloaded.
addEventListener("beforeunload", (event) => {
  if (hasDrafts()) event.preventDefault()
})

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start)
else start()
