import {
  type AccountId,
  type AccountStore,
  type DashboardStore,
  type SharedView,
  type StorageFailure,
  type ViewKind,
  viewUrl,
  type WithViewToken
} from "@dashstream/core"
import { Console, Effect, Either } from "effect"
import { basePath, type Env } from "./Config.js"
import { CommandFailed, UsageError } from "./Errors.js"

/**
 * What the commands of every shared view kind (`dashboards`, `rotations`; docs/api.md sections 8, 11 and 15) print
 * alike: the view URL (`prefix` is what it starts with: the server's `--base-url`, or its base path, see
 * `ViewCommands.viewLinkPrefix`), tables, and a new view token.
 */

/** The line a view's URL is printed as when it cannot be shown (a view made before view URLs were kept). */
export const unknownLink = "(not kept for a view made before this version: rotate its view token to get one)"

/** A view's URL under `prefix`, or {@link unknownLink}. */
export const linkText = (kind: ViewKind, view: SharedView, prefix: string): string =>
  view.viewToken === null ? unknownLink : viewUrl(prefix, kind, view.viewToken)

/** Prints a view's URL after a line that says what it is (a path when `prefix` is not a full URL). */
export const printLink = (kind: ViewKind, view: SharedView, prefix: string) =>
  Effect.zipRight(
    Console.log(
      /^https?:\/\//.test(prefix)
        ? "View URL (share it as a secret; a new view token revokes it):"
        : "View URL path (append it to the server's address, or give --base-url; share it as a secret):"
    ),
    Console.log(linkText(kind, view, prefix))
  )

/**
 * What the `list` and `rotate-token` commands need to know of one kind of shared view: its use cases (with their
 * not-found errors as `CommandFailed`), its admin API answer (`toJson`, whose view URL starts with the prefix) and its
 * own table columns (between the name and the creation time).
 */
export interface ViewCommandKind<A extends SharedView> {
  readonly kind: ViewKind
  readonly list: (
    accountId: AccountId
  ) => Effect.Effect<ReadonlyArray<A>, CommandFailed | StorageFailure, AccountStore | DashboardStore>
  readonly rotate: (
    accountId: AccountId,
    id: string
  ) => Effect.Effect<WithViewToken<A>, CommandFailed | StorageFailure, AccountStore | DashboardStore>
  readonly toJson: (
    view: A,
    prefix: string
  ) => { readonly id: string; readonly name: string; readonly createdAt: string }
  readonly columns: { readonly headers: ReadonlyArray<string>; readonly cells: (view: A) => ReadonlyArray<string> }
}

/**
 * `<kind>s list`: the account's views, oldest first, as a table (id, name, the kind's columns, created, view URL) or,
 * with `json`, `{"<kind>s": [...]}` as the admin API answers it; view URLs start with `prefix`.
 */
export const list = <A extends SharedView>(
  spec: ViewCommandKind<A>,
  accountId: AccountId,
  json: boolean,
  prefix: string
): Effect.Effect<void, CommandFailed | StorageFailure, AccountStore | DashboardStore> =>
  Effect.gen(function* () {
    const views = yield* spec.list(accountId)
    const { kind } = spec
    if (json) return yield* Console.log(JSON.stringify({ [`${kind}s`]: views.map((v) => spec.toJson(v, prefix)) }))
    if (views.length === 0) return yield* Console.log(`The account has no ${kind}s yet.`)
    yield* printTable([
      ["ID", "NAME", ...spec.columns.headers, "CREATED", "VIEW URL"],
      ...views.map((v) => {
        const answer = spec.toJson(v, prefix)
        return [answer.id, answer.name, ...spec.columns.cells(v), answer.createdAt, linkText(kind, v, prefix)]
      })
    ])
  })

/** Prints rows as columns two spaces apart, each padded to its longest cell but the last. */
export const printTable = (rows: ReadonlyArray<ReadonlyArray<string>>) =>
  Effect.forEach(rows, (row) =>
    Console.log(
      row
        .map((cell, i) => (i < row.length - 1 ? cell.padEnd(Math.max(...rows.map((r) => r[i]?.length ?? 0))) : cell))
        .join("  ")
    )
  )

const failed = (error: { readonly message: string }) => Effect.fail(new CommandFailed({ message: error.message }))

/** An unknown account (for `Effect.catchTags`) as a runtime failure (exit code 1). */
export const accountNotFound = { AccountNotFound: failed } as const
/** An unknown account or dashboard as a runtime failure. */
export const dashboardNotFound = { AccountNotFound: failed, DashboardNotFound: failed } as const
/** An unknown account or rotation as a runtime failure. */
export const rotationNotFound = { AccountNotFound: failed, RotationNotFound: failed } as const

/**
 * `<kind>s rotate-token`: gives a view a new view token and prints its new URL (the old one stops working) or, with
 * `json`, the view as the admin API answers it.
 */
export const rotateToken = <A extends SharedView>(
  spec: ViewCommandKind<A>,
  accountId: AccountId,
  id: string,
  json: boolean,
  prefix: string
): Effect.Effect<void, CommandFailed | StorageFailure, AccountStore | DashboardStore> =>
  Effect.gen(function* () {
    const view = yield* spec.rotate(accountId, id)
    if (json) return yield* Console.log(JSON.stringify(spec.toJson(view, prefix)))
    const noun = `${spec.kind.charAt(0).toUpperCase()}${spec.kind.slice(1)}`
    yield* Console.log(`${noun} ${view.id} has a new view token; the old view URL no longer opens.`)
    yield* printLink(spec.kind, view, prefix)
  })

/**
 * What the view URLs a command prints start with (docs/api.md section 8): with `--base-url` (`baseUrl`), the server's
 * address as people open it (`http` or `https`, with the base path if the server has one; a trailing `/` is dropped),
 * so full URLs are printed; else the base path of `Config.basePath`, so paths are printed. A bad value is a
 * {@link UsageError} naming the flag.
 */
export const viewLinkPrefix = (
  baseUrl: string | undefined,
  basePathFlag: string | undefined,
  env: Env
): Either.Either<string, UsageError> => {
  if (baseUrl === undefined) return basePath(basePathFlag, env)
  const url = URL.canParse(baseUrl) ? new URL(baseUrl) : undefined
  if (
    url === undefined ||
    (url.protocol !== "http:" && url.protocol !== "https:") ||
    url.search !== "" ||
    url.hash !== ""
  )
    return Either.left(
      new UsageError({
        message:
          "--base-url must be the server's http:// or https:// address, without a query (https://dash.example.com/prefix)"
      })
    )
  return Either.right(url.href.replace(/\/+$/, ""))
}
