/** Small pieces every console view shares: error text, a secret shown once, a two-step confirmation, routes. */
import type { ComponentChildren } from "preact"
import { useEffect, useState } from "preact/hooks"
import { api, ApiError } from "./api.js"

/** A failure as one sentence for the operator: the server's message, and its `path` when it names a field. */
export const describeError = (error: unknown): string => {
  if (error instanceof ApiError) {
    if (error.status === 429 && error.retryAfter !== undefined)
      return `${error.message} (try again in ${error.retryAfter} s)`
    return error.path === undefined ? error.message : `${error.path}: ${error.message}`
  }
  return error instanceof Error ? error.message : String(error)
}

/** An error message line (`role="alert"`), nothing when `error` is undefined. */
export const ErrorText = ({ error }: { readonly error: unknown }) =>
  error === undefined ? null : (
    <p class="cw-error" role="alert">
      {describeError(error)}
    </p>
  )

/** A labelled field (`<label class="cw-field">`) with its server message beside it. */
export const Field = (props: {
  readonly label: string
  readonly message: string | undefined
  readonly children: ComponentChildren
}) => (
  <label class="cw-field">
    {props.label}
    {props.children}
    <FieldMessage message={props.message} />
  </label>
)

/**
 * A list of the console (accounts, widgets, dashboards, rotations, alert rules, receivers) as a table: the last load
 * error, "Loading…" while `items` is undefined, `empty` when there are none, else a table of class `cw-table <class>`
 * with a column per header (`""` for the actions column) and the rows `row` gives for each item.
 */
export const ListTable = <V,>(props: {
  readonly items: ReadonlyArray<V> | undefined
  readonly loadError: unknown
  readonly empty: string
  readonly class: string
  readonly headers: ReadonlyArray<string>
  readonly row: (item: V) => ComponentChildren
}) => (
  <>
    <ErrorText error={props.loadError} />
    {props.items === undefined ? (
      <p class="cw-muted">Loading…</p>
    ) : props.items.length === 0 ? (
      <p class="cw-muted">{props.empty}</p>
    ) : (
      <table class={`cw-table ${props.class}`}>
        <thead>
          <tr>
            {props.headers.map((header, i) => (
              <th key={i}>{header === "" ? null : header}</th>
            ))}
          </tr>
        </thead>
        <tbody>{props.items.map(props.row)}</tbody>
      </table>
    )}
  </>
)

/** A 400's message beside the field its `path` names (`role="alert"`), nothing when `message` is undefined. */
export const FieldMessage = (props: { readonly message: string | undefined }) =>
  props.message === undefined ? null : (
    <span class="cw-error cw-field-error" role="alert">
      {props.message}
    </span>
  )

/**
 * A secret the server shows only once (an access key): in a read-only field with a Copy button and the
 * warning that it will not be shown again. `onDone` hides it.
 */
export const ShownOnce = (props: {
  readonly label: string
  readonly value: string
  readonly href?: string
  readonly onDone: () => void
}) => {
  const [copied, setCopied] = useState(false)
  const copy = () => {
    void navigator.clipboard?.writeText(props.value).then(
      () => setCopied(true),
      () => setCopied(false)
    )
  }
  return (
    <div class="cw-secret" role="status">
      <p class="cw-secret-label">
        {props.label} <strong>It is shown only now:</strong> copy it before closing this box.
      </p>
      <div class="cw-secret-row">
        <input class="cw-secret-value" readOnly value={props.value} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" onClick={copy}>
          {copied ? "Copied" : "Copy"}
        </button>
        {props.href === undefined ? null : (
          <a class="cw-button" href={props.href} target="_blank" rel="noreferrer noopener">
            Open
          </a>
        )}
        <button type="button" onClick={props.onDone}>
          Done
        </button>
      </div>
    </div>
  )
}

/**
 * A button that asks first: a click shows `question` with a confirming button (`confirmLabel`) and Cancel; only the
 * confirming button runs `action`.
 */
export const ConfirmButton = (props: {
  readonly label: string
  readonly question: string
  readonly confirmLabel: string
  readonly danger?: boolean
  readonly action: () => void
}) => {
  const [asking, setAsking] = useState(false)
  if (!asking) {
    return (
      <button type="button" class={props.danger === true ? "cw-danger-outline" : ""} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    )
  }
  return (
    <span class="cw-confirm" role="group" aria-label={props.question}>
      <span class="cw-confirm-question">{props.question}</span>
      <button
        type="button"
        class={props.danger === true ? "cw-danger" : "cw-primary"}
        onClick={() => {
          setAsking(false)
          props.action()
        }}
      >
        {props.confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  )
}

/** A titled section of a page. */
export const Section = (props: { readonly title: string; readonly children: ComponentChildren }) => (
  <section class="cw-section" aria-label={props.title}>
    <h2>{props.title}</h2>
    {props.children}
  </section>
)

/**
 * The console's pages, addressed by the fragment: `#/accounts/<id>`, a dashboard's layout editor
 * `#/accounts/<id>/dashboards/<dashboardId>`, a rotation `#/accounts/<id>/rotations/<rotationId>` (`rotationId`
 * undefined, `.../rotations/new`, for a new one).
 */
export type Route =
  | { readonly page: "accounts" }
  | { readonly page: "account"; readonly accountId: string }
  | { readonly page: "editor"; readonly accountId: string; readonly dashboardId: string }
  | { readonly page: "rotation"; readonly accountId: string; readonly rotationId: string | undefined }

/** The path segment of a new rotation's page (rotation ids are UUIDs, so never this). */
const newRotation = "new"

/** Reads a route from `location.hash`; the accounts page for anything else. */
export const parseRoute = (hash: string): Route => {
  const parts = hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent)
  if (parts[0] === "accounts" && parts[1] !== undefined && parts[1] !== "") {
    const id = parts[3]
    if (id !== undefined && id !== "") {
      if (parts[2] === "dashboards") return { page: "editor", accountId: parts[1], dashboardId: id }
      if (parts[2] === "rotations")
        return { page: "rotation", accountId: parts[1], rotationId: id === newRotation ? undefined : id }
    }
    return { page: "account", accountId: parts[1] }
  }
  return { page: "accounts" }
}

/** The fragment of a route (for links). */
export const routeHref = (route: Route): string => {
  const e = encodeURIComponent
  switch (route.page) {
    case "accounts":
      return "#/"
    case "account":
      return `#/accounts/${e(route.accountId)}`
    case "editor":
      return `#/accounts/${e(route.accountId)}/dashboards/${e(route.dashboardId)}`
    case "rotation":
      return `#/accounts/${e(route.accountId)}/rotations/${e(route.rotationId ?? newRotation)}`
  }
}

/** The current route, following `hashchange`. */
export const useRoute = (): Route => {
  const [route, setRoute] = useState(() => parseRoute(location.hash))
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash))
    addEventListener("hashchange", onChange)
    return () => removeEventListener("hashchange", onChange)
  }, [])
  return route
}

/** The current time in UNIX seconds, re-read every `everyMs` (ages count up on their own). */
export const useNow = (everyMs: number): number => {
  const [now, setNow] = useState(() => Date.now() / 1000)
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now() / 1000), everyMs)
    return () => clearInterval(timer)
  }, [everyMs])
  return now
}

/** An account's name as the console shows it: `(no name)` for an account made without one. */
export const accountLabel = (name: string): string => (name === "" ? "(no name)" : name)

/**
 * Where the page is: `Accounts / <account name> / <dashboard or rotation name>`, every part but the last a link. A
 * name not known yet (still loading) is left out with what follows it.
 */
export const Crumbs = (props: {
  readonly account?: { readonly id: string; readonly name: string | undefined } | undefined
  /** The name of the account's dashboard or rotation the page shows. */
  readonly viewName?: string | undefined
}) => {
  const parts: Array<{ readonly label: string; readonly href: string | undefined }> = [
    { label: "Accounts", href: routeHref({ page: "accounts" }) }
  ]
  const account = props.account
  if (account !== undefined && account.name !== undefined) {
    const last = props.viewName === undefined
    parts.push({
      label: accountLabel(account.name),
      href: last ? undefined : routeHref({ page: "account", accountId: account.id })
    })
    if (!last) parts.push({ label: props.viewName!, href: undefined })
  }
  return (
    <nav class="cw-crumbs" aria-label="Breadcrumbs">
      {parts.map((part, i) => [
        i === 0 ? null : <span class="cw-crumb-sep"> / </span>,
        part.href === undefined ? (
          <span class="cw-crumb" aria-current="page">
            {part.label}
          </span>
        ) : (
          <a class="cw-crumb" href={part.href}>
            {part.label}
          </a>
        )
      ])}
    </nav>
  )
}

/** The name of the account `accountId` (for the breadcrumbs), `undefined` while loading or when it is unknown. */
export const useAccountName = (accountId: string): string | undefined => {
  const [name, setName] = useState<string | undefined>(undefined)
  useEffect(() => {
    api.listAccounts().then(
      (list) => setName(list.find((a) => a.id === accountId)?.name),
      () => setName(undefined)
    )
  }, [accountId])
  return name
}
