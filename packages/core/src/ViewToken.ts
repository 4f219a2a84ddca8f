import { createHash, randomBytes } from "node:crypto"

/**
 * Dashboard view tokens (docs/api.md section 11): the secret in a dashboard's view URL `/d/<viewToken>`. It reads that
 * dashboard's tiles and nothing else (it is not an access key and cannot push). Random, stored only as a digest,
 * replaced by rotation (the old one stops working at once).
 */

/** The SHA-256 digest of a view token, lowercase hex (64 characters): what the store keeps and looks up. */
export type ViewTokenDigest = string & { readonly ViewTokenDigest: unique symbol }

/**
 * A new view token: `dv_` followed by 32 random bytes (256 bits) as 43 characters of base64url, 46 characters in
 * all, safe in a URL path segment. The prefix tells it apart from an access key (`ds_`) and lets secret scanners
 * recognise a leaked one.
 */
export const newViewToken = (): string => `dv_${randomBytes(32).toString("base64url")}`

/** The digest under which a view token is stored and looked up. */
export const digestViewToken = (viewToken: string): ViewTokenDigest =>
  createHash("sha256").update(viewToken, "utf8").digest("hex") as ViewTokenDigest

/**
 * The kinds of shared view, in the order the API lists them: what a view token opens, a dashboard's page (`/d/<token>`,
 * docs/api.md section 11) or a rotation's (`/r/<token>`, section 15). Every per-kind declaration (the HTTP endpoints of
 * a view, their handlers) is derived from this list.
 */
export const viewKinds = ["dashboard", "rotation"] as const

/** One of {@link viewKinds}. */
export type ViewKind = (typeof viewKinds)[number]

/** The first path segment of each kind's URLs: `d` for a dashboard (`/d/<viewToken>`), `r` for a rotation. */
export const viewSegment = { dashboard: "d", rotation: "r" } as const satisfies Readonly<Record<ViewKind, string>>

/**
 * The URL path of a view page as Dashstream returns and prints it (docs/api.md sections 11, 15, 16): `basePath` (the
 * `serve --base-path` prefix, `""` for the root) then `/d/<viewToken>` for a dashboard or `/r/<viewToken>` for a
 * rotation. Every view URL is built here, so each carries the base path. Base64url tokens need no escaping; any
 * other character is percent-encoded.
 */
export const viewUrl = (basePath: string, kind: ViewKind, viewToken: string): string =>
  `${basePath}/${viewSegment[kind]}/${encodeURIComponent(viewToken)}`

/** The path of a dashboard's page for a view token at the root: `/d/<viewToken>` (see {@link viewUrl}). */
export const viewPath = (viewToken: string): string => viewUrl("", "dashboard", viewToken)
