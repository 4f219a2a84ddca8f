import { createHash, randomBytes } from "node:crypto"

/**
 * Dashboard view tokens (contract section 11): the secret in a dashboard's view URL `/d/<viewToken>`. It reads that
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

/** The path of a dashboard's page for a view token: `/d/<viewToken>` (base64url needs no escaping). */
export const viewPath = (viewToken: string): string => `/d/${viewToken}`
