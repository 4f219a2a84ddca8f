/**
 * The admin API and the console session as the page calls them (docs/api.md sections 7, 11, 14): same-origin `fetch`
 * with the session cookie, and the header `X-Dashstream-Console: 1` on every request that changes something (the
 * server refuses a cookie-authenticated change without it). Every failure is an {@link ApiError} carrying the
 * contract's error body (`code`, `message`, `path`). The types of the answers are generated from the server's OpenAPI
 * document (`generated/api.ts`, written by `scripts/build.mjs`; see docs/internals.md, "The console's API types").
 */

import type { components, paths } from "./generated/api.js"

type Schemas = components["schemas"]

/** The JSON body of the success answer (200 or 201) of `method` on `path`, as the OpenAPI document declares it. */
type Answer<P extends keyof paths, M extends "get" | "post" | "put"> =
  NonNullable<paths[P][M]> extends { readonly responses: infer R }
    ? (R extends { readonly 200: infer S } ? S : R extends { readonly 201: infer S } ? S : never) extends {
        readonly content: { readonly "application/json": infer A }
      }
      ? A
      : never
    : never

/** The JSON body `method` on `path` takes, as the OpenAPI document declares it. */
type Body<P extends keyof paths, M extends "post" | "put"> =
  NonNullable<paths[P][M]> extends {
    readonly requestBody?: { readonly content: { readonly "application/json": infer B } }
  }
    ? B
    : never

/** An account as `GET /admin/accounts` lists it (never a key). */
export type Account = Schemas["Account"]

/** A stored entry: `ts` in UNIX seconds (microsecond precision), the stored point. */
export type StoredEntry = Schemas["ReadEntry"]

/** A widget as `GET /admin/accounts/<id>/widgets` lists it, with its stream's newest entry (`null` when empty). */
export type Widget = Schemas["WidgetWithLatest"]

/**
 * A tile as the admin API stores it: grid cells, 12 columns. Fields this page does not know (later additions) are
 * kept as they came and sent back unchanged.
 */
export type TileJson = Schemas["Tile"] & { readonly [other: string]: unknown }

/**
 * A dashboard as the admin API answers it, with its share link (`viewToken`, `url`; both `null` for a dashboard made
 * before view links were kept, docs/api.md section 11).
 */
export type Dashboard = Schemas["Dashboard"]

/** A rotation as the admin API answers it (docs/api.md section 15.2), with its share link like a dashboard's. */
export type Rotation = Schemas["Rotation"]

/** An alert rule as the admin API answers it, with its `state`, `stateSince` and `silencedUntil` (docs/api.md 18.1). */
export type AlertRule = Schemas["AlertRule"]

/** The body of an alert rule's `POST` and `PUT` (docs/api.md section 18.1). */
export type AlertRuleBody = Schemas["AlertRuleBody"]

/** A receiver as the admin API answers it: never its secret, only `hasSecret` (docs/api.md section 18.2). */
export type Receiver = Schemas["Receiver"]

/** The body of a receiver's `POST` and `PUT`: `secret` absent keeps the stored one, `null` removes it (18.2). */
export type ReceiverBody = Schemas["ReceiverBody"]

/** A failed request: the HTTP status and the contract's error body (section 5). */
export class ApiError extends Error {
  override readonly name = "ApiError"
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly path: string | undefined,
    readonly retryAfter: number | undefined
  ) {
    super(message)
  }
}

/** Dispatched on `window` when a request other than sign-in is answered 401: the session is no longer valid. */
export const unauthorizedEvent = "cw-unauthorized"

const sessionPath = "/console/session"

/**
 * Where the server's routes are, as seen from this page (docs/api.md section 16): the page's own path without its
 * `console` (or `console/`), so `/dashboards/console` calls `/dashboards/admin/...` under whatever prefix a reverse
 * proxy serves it.
 */
const served = (path: string): string => `${location.pathname.replace(/console\/?$/, "")}${path.slice(1)}`

const errorOf = async (response: Response): Promise<ApiError> => {
  let body: unknown
  try {
    body = await response.json()
  } catch {
    body = undefined
  }
  const error = (body as { error?: { code?: unknown; message?: unknown; path?: unknown } } | undefined)?.error
  const retry = Number(response.headers.get("retry-after"))
  return new ApiError(
    response.status,
    typeof error?.code === "string" ? error.code : `http_${response.status}`,
    typeof error?.message === "string" ? error.message : `the server answered ${response.status}`,
    typeof error?.path === "string" ? error.path : undefined,
    Number.isFinite(retry) && retry > 0 ? retry : undefined
  )
}

/**
 * One request to the server. `body` is sent as JSON. Answers the parsed JSON body, or `undefined` for 204. Throws
 * {@link ApiError} for any non-2xx answer, and for a network failure (status 0, code `network`).
 */
export const request = async <A = unknown>(method: string, path: string, body?: unknown): Promise<A> => {
  const headers: Record<string, string> = { accept: "application/json" }
  if (method !== "GET" && method !== "HEAD") headers["x-dashstream-console"] = "1"
  if (body !== undefined) headers["content-type"] = "application/json"
  let response: Response
  try {
    response = await fetch(served(path), {
      method,
      headers,
      credentials: "same-origin",
      cache: "no-store",
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  } catch {
    return Promise.reject(new ApiError(0, "network", "the server cannot be reached", undefined, undefined))
  }
  if (!response.ok) {
    // The session ended (expired, signed out elsewhere, or the admin token changed): the page shows the sign-in form.
    if (response.status === 401 && path !== sessionPath) dispatchEvent(new Event(unauthorizedEvent))
    throw await errorOf(response)
  }
  if (response.status === 204) return undefined as A
  const text = await response.text()
  return (text === "" ? undefined : JSON.parse(text)) as A
}

const enc = encodeURIComponent
const accountPath = (id: string) => `/admin/accounts/${enc(id)}`

/** Where each kind of shared view is in the admin API: its list and one view (sections 11.1, 15.2). */
interface ViewPaths {
  readonly dashboards: {
    readonly list: "/admin/accounts/{id}/dashboards"
    readonly one: "/admin/accounts/{id}/dashboards/{dashboardId}"
  }
  readonly rotations: {
    readonly list: "/admin/accounts/{id}/rotations"
    readonly one: "/admin/accounts/{id}/rotations/{rotationId}"
  }
}

/** A kind of shared view: dashboards or rotations. */
export type ViewKind = keyof ViewPaths

/** A shared view of kind `K` as the admin API answers it (with its share link, `viewToken` and `url`). */
export type View<K extends ViewKind> = Answer<ViewPaths[K]["one"], "get">

/**
 * The calls of one resource of an account kept as a list and its items, `<account>/<segment>` and
 * `<account>/<segment>/<itemId>`: `list` (the answer's `key` array, oldest first), `get`, `create` (201, a `Create`
 * body), `save` (`PUT` of a `Save` body, the new version) and `remove` (204); `one` is an item's path. Failures are
 * {@link ApiError}s (404 with the resource's `..._not_found` code, 400 `invalid_request` with the field's `path`).
 */
const itemCalls = <A, Create, Save>(segment: string, key: string) => {
  const list = (id: string) => `${accountPath(id)}/${segment}`
  const one = (id: string, itemId: string) => `${list(id)}/${enc(itemId)}`
  return {
    one,
    list: (id: string) =>
      request<Readonly<Record<string, ReadonlyArray<A>>>>("GET", list(id)).then((r) => r[key] ?? []),
    get: (id: string, itemId: string) => request<A>("GET", one(id, itemId)),
    create: (id: string, body: Create) => request<A>("POST", list(id), body),
    save: (id: string, itemId: string, body: Save) => request<A>("PUT", one(id, itemId), body),
    remove: (id: string, itemId: string) => request<void>("DELETE", one(id, itemId))
  }
}

const ruleCalls = itemCalls<AlertRule, AlertRuleBody, AlertRuleBody>("alert-rules", "rules")
const receiverCalls = itemCalls<Receiver, ReceiverBody, ReceiverBody>("receivers", "receivers")

/**
 * The admin calls of one kind of shared view, the same six endpoints for dashboards and rotations (docs/api.md
 * sections 11.1 and 15.2): `list` (oldest first), `get`, `create` (201), `save` (`PUT`, the new version), `remove`
 * (204; its view link stops working) and `newLink` (a new view token; the old link stops working at once). Each answer
 * carries the view's current share link. Failures are {@link ApiError}s (404 `dashboard_not_found` or
 * `rotation_not_found`, 400 `invalid_request` with the field's `path`).
 */
const viewCalls = <K extends ViewKind>(kind: K) => {
  type P = ViewPaths[K]
  const calls = itemCalls<View<K>, Body<P["list"], "post">, Body<P["one"], "put">>(kind, kind)
  return {
    ...calls,
    newLink: (id: string, viewId: string) => request<View<K>>("POST", `${calls.one(id, viewId)}/view-token`)
  }
}

/** The calls the console makes, one per endpoint it uses. */
export const api = {
  /** `POST /console/session`: 204 and a session cookie; 401 for a wrong token, 429 when throttled. */
  signIn: (token: string) => request<void>("POST", sessionPath, { token }),
  /** `DELETE /console/session`: ends the session everywhere. */
  signOut: () => request<void>("DELETE", sessionPath),
  listAccounts: () => request<Answer<"/admin/accounts", "get">>("GET", "/admin/accounts").then((r) => r.accounts),
  createAccount: (name: string) =>
    request<Answer<"/admin/accounts", "post">>("POST", "/admin/accounts", name === "" ? {} : { name }),
  newAccessKey: (id: string, revokeOthers: boolean) =>
    request<Answer<"/admin/accounts/{id}/access-keys", "post">>(
      "POST",
      `${accountPath(id)}/access-keys${revokeOthers ? "?revokeOthers=true" : ""}`
    ).then((r) => r.accessKey),
  listWidgets: (id: string) =>
    request<Answer<"/admin/accounts/{id}/widgets", "get">>("GET", `${accountPath(id)}/widgets`).then((r) => r.widgets),
  createWidget: (id: string, streamName: string, type: string) =>
    request<Answer<"/admin/accounts/{id}/widgets", "post">>("POST", `${accountPath(id)}/widgets`, { streamName, type }),
  deleteWidget: (id: string, streamName: string) =>
    request<void>("DELETE", `${accountPath(id)}/widgets/${enc(streamName)}`),
  pushPoint: (id: string, streamName: string, point: unknown) =>
    request<Answer<"/admin/accounts/{id}/widgets/{stream}/points", "post">>(
      "POST",
      `${accountPath(id)}/widgets/${enc(streamName)}/points`,
      point
    ),
  /** The dashboards of an account (docs/api.md section 11.1). */
  dashboards: viewCalls("dashboards"),
  /** The rotations of an account (docs/api.md section 15.2). */
  rotations: viewCalls("rotations"),
  /**
   * The alert rules of an account (docs/api.md section 18.5); `silence` sets `silencedUntil` (an ISO 8601 time with
   * a zone) or lifts it (`null`) and answers the rule.
   */
  alertRules: {
    ...ruleCalls,
    silence: (id: string, ruleId: string, until: string | null) =>
      request<AlertRule>("POST", `${ruleCalls.one(id, ruleId)}/silence`, { until })
  },
  /**
   * The receivers of an account (docs/api.md section 18.5); `test` sends a test notification and answers the
   * receiver's HTTP status whatever it is, or fails with 502 `receiver_unreachable` and the reason.
   */
  receivers: {
    ...receiverCalls,
    test: (id: string, receiverId: string) =>
      request<Answer<"/admin/accounts/{id}/receivers/{receiverId}/test", "post">>(
        "POST",
        `${receiverCalls.one(id, receiverId)}/test`
      ).then((r) => r.status)
  }
}
