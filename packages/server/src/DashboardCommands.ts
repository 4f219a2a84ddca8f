import { readFile } from "node:fs/promises"
import {
  type AccountId,
  type AccountStore,
  type Dashboard,
  Dashboards,
  type DashboardStore,
  DashboardName,
  decodeLayout,
  MAX_NAME_LENGTH,
  type StorageFailure,
  type Tile
} from "@dashstream/core"
import { Console, Effect, Either, Schema } from "effect"
import { CommandFailed, UsageError } from "./Errors.js"
import { accountNotFound, dashboardNotFound, printLink, type ViewCommandKind } from "./ViewCommands.js"

/**
 * The `dashboards create`, `dashboards list` and `dashboards rotate-token` commands (docs/api.md section 12), apart from the command table of
 * `Cli.ts`: what they read, call and print. Exit codes as docs/api.md section 8 says: a layout file that cannot be
 * read or breaks a tile rule is a usage error (2), as a bad flag value is; a failing store is a runtime failure (1).
 */

const isName = Schema.is(DashboardName)

/** Checks `--name`: 1 to 200 characters (docs/api.md section 11), else a `UsageError`. */
export const parseName = (name: string): Either.Either<string, UsageError> =>
  isName(name)
    ? Either.right(name)
    : Either.left(new UsageError({ message: `--name must be 1 to ${MAX_NAME_LENGTH} characters` }))

/**
 * Reads `--layout FILE`: the JSON of the admin API body's `tiles` array, or `{"tiles": [...]}`, checked against the
 * grid rules of docs/api.md section 11. Fails with a `UsageError` naming the file and the tile (`tiles[2].w`).
 * Runs before the database is opened.
 */
export const readLayout = (file: string): Effect.Effect<ReadonlyArray<Tile>, UsageError> =>
  Effect.gen(function* () {
    const text = yield* Effect.tryPromise({
      try: () => readFile(file, "utf8"),
      catch: (cause) =>
        new UsageError({
          message: `--layout ${file} cannot be read: ${cause instanceof Error ? cause.message : String(cause)}`
        })
    })
    const json = yield* Either.try({
      try: () => JSON.parse(text) as unknown,
      catch: () => new UsageError({ message: `--layout ${file} is not JSON` })
    })
    return yield* Either.mapLeft(decodeLayout(json), (error) => layoutError(file, error))
  })

const layoutError = (file: string, error: { readonly message: string; readonly path?: string | undefined }) =>
  new UsageError({
    message: `--layout ${file}: ${error.path === undefined ? "" : `${error.path}: `}${error.message}`
  })

/**
 * `dashboards create`: creates a dashboard of the account (the default layout when `layout` is undefined) and prints
 * its view URL (`prefix`: the server's `--base-url` or base path, see `ViewCommands.viewLinkPrefix`) or, with `json`, the
 * dashboard as the admin API answers it. A tile naming a stream that is not a widget of the account is a `UsageError`.
 */
export const create = (
  accountId: AccountId,
  name: string,
  layout: { readonly file: string; readonly tiles: ReadonlyArray<Tile> } | undefined,
  json: boolean,
  prefix = ""
): Effect.Effect<void, UsageError | CommandFailed | StorageFailure, AccountStore | DashboardStore> =>
  Effect.gen(function* () {
    const dashboard = yield* Dashboards.createDashboard(
      accountId,
      layout === undefined ? { name } : { name, tiles: layout.tiles }
    ).pipe(
      Effect.catchTags({
        InvalidRequest: (error) =>
          Effect.fail(
            layout === undefined ? new UsageError({ message: error.message }) : layoutError(layout.file, error)
          ),
        AccountNotFound: (error) => Effect.fail(new CommandFailed({ message: error.message }))
      })
    )
    if (json) return yield* Console.log(JSON.stringify(Dashboards.dashboardView(dashboard, prefix)))
    const tiles = dashboard.tiles.length === 1 ? "1 tile" : `${dashboard.tiles.length} tiles`
    yield* Console.log(`Created dashboard ${JSON.stringify(dashboard.name)} with id ${dashboard.id} and ${tiles}.`)
    yield* printLink("dashboard", dashboard, prefix)
  })

/** Dashboards as the `dashboards list` and `dashboards rotate-token` commands show them (see `ViewCommands`). */
export const views: ViewCommandKind<Dashboard> = {
  kind: "dashboard",
  list: (accountId) => Dashboards.views.list(accountId).pipe(Effect.catchTags(accountNotFound)),
  rotate: (accountId, id) => Dashboards.views.rotateToken(accountId, id).pipe(Effect.catchTags(dashboardNotFound)),
  toJson: Dashboards.dashboardView,
  columns: { headers: ["TILES"], cells: (d) => [String(d.tiles.length)] }
}
