import { escapeHtml, jsonForScript, manifest as dashboardManifest } from "@dashstream/dashboard-web"
import { manifest } from "./Assets.js"
import type { ConsoleConfig } from "./Config.js"

/**
 * The Content-Security-Policy header value of the console page (contract section 14, with section 11's asset rules).
 * As the dashboard page's, except:
 * - `frame-ancestors 'none'`: the console changes things, so no other page may frame it (click-jacking).
 * Scripts only from the page's own origin, never inline (the configuration travels as a JSON data block);
 * `connect-src 'self'`: the admin API, sign-in and the map outlines; `img-src` allows http/https and `data:` because
 * the layout editor draws image tiles whose pushed points name image URLs of any origin; `style-src 'unsafe-inline'`
 * for the html tile's `srcdoc` frame (as on the dashboard page) and the grid's element styles.
 */
export const contentSecurityPolicy: string = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' http: https: data:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'none'",
  "child-src 'none'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

/**
 * Headers the server sends with `GET /console` besides `Content-Type: text/html; charset=utf-8`: the CSP,
 * `Referrer-Policy: no-referrer` (contract section 14), `X-Content-Type-Options: nosniff`, `Cache-Control: no-store`.
 */
export const pageHeaders: Readonly<Record<string, string>> = {
  "Content-Security-Policy": contentSecurityPolicy,
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
  "Cache-Control": "no-store"
}

/**
 * The HTML of `GET /console` (contract section 14): a shell that loads ONE script and ONE stylesheet (hashed names
 * from `bundle/manifest.json`) and carries {@link ConsoleConfig} as a JSON data block (`#ds-console`). The page signs
 * in and draws itself in the browser. It is the same for every request and holds no secret. Throws `BundleNotBuilt`
 * when this package's or the dashboard page's bundle has not been built.
 */
export const pageHtml = (): string => {
  const m = manifest()
  const config: ConsoleConfig = { maps: dashboardManifest().maps }
  return `<!doctype html>
<html lang="en" data-theme="dark">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="dark">
<title>Console · Dashstream</title>
<link rel="stylesheet" href="${escapeHtml(m.style)}">
<script type="application/json" id="ds-console">${jsonForScript(config)}</script>
<script src="${escapeHtml(m.script)}" defer></script>
</head>
<body>
<noscript><p class="cw-noscript">The console needs JavaScript.</p></noscript>
</body>
</html>
`
}
