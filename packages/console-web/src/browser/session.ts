/**
 * The first-run link of docs/api.md section 14: `serve` prints `/console#token=<token>`. The page reads the token from
 * the fragment and removes it from the address bar at once (`main.tsx`, `history.replaceState`, before anything else
 * runs), so it stays out of the history, bookmarks and every URL; it is then posted to `POST /console/session` and
 * forgotten. The token is never written to localStorage, sessionStorage, a cookie of the page's own, or a URL.
 */

/** Reads `token=<token>` from a fragment (`#token=abc`); `undefined` when there is none. */
export const fragmentToken = (hash: string): string | undefined => {
  const params = new URLSearchParams(hash.replace(/^#/, ""))
  const token = params.get("token")
  return token === null || token === "" ? undefined : token
}
