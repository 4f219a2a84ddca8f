/**
 * The first-run link of contract section 14: `serve` prints `/console#token=<token>`. The page reads the token from
 * the fragment and removes it from the address bar at once (`history.replaceState`), before anything else runs, so it
 * stays out of the history, bookmarks and every URL; it is then posted to `POST /console/session` and forgotten.
 * The token is never written to localStorage, sessionStorage, a cookie of the page's own, or a URL.
 */

/** Reads `token=<token>` from a fragment (`#token=abc`); `undefined` when there is none. */
export const fragmentToken = (hash: string): string | undefined => {
  const params = new URLSearchParams(hash.replace(/^#/, ""))
  const token = params.get("token")
  return token === null || token === "" ? undefined : token
}

/**
 * Takes the token out of the current URL's fragment: answers it and replaces the address bar's URL with the same
 * path and query and no fragment (no new history entry). `undefined`, and the URL untouched, when there is none.
 */
export const takeFragmentToken = (): string | undefined => {
  const token = fragmentToken(location.hash)
  if (token !== undefined) history.replaceState(history.state, "", `${location.pathname}${location.search}`)
  return token
}
