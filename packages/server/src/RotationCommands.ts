import {
  type AccountId,
  type AccountStore,
  checkRotationBody,
  type DashboardStore,
  type InvalidRequest,
  type Rotation,
  type RotationBody,
  Rotations,
  type StorageFailure
} from "@dashstream/core"
import { Console, Effect, Either } from "effect"
import { type CommandFailed, UsageError } from "./Errors.js"
import { accountNotFound, printLink, rotationNotFound, type ViewCommandKind } from "./ViewCommands.js"

/**
 * The `rotations` commands (docs/api.md section 15): `create`, `list`, `show`, `delete` and `rotate-token`, apart from
 * the command table of `Cli.ts`: what they check, call and print. Exit codes as docs/api.md section 8 says: a flag value
 * that breaks a rotation rule (the interval, the name, a dashboard id that is not the account's) is a usage error (2);
 * an unknown rotation or a failing store is a runtime failure (1).
 */

/** The flag a rotation body's field comes from, for error messages. */
const flagOf = (path: string | undefined): string =>
  path === undefined
    ? ""
    : path.startsWith("intervalSeconds")
      ? "--interval: "
      : path.startsWith("name")
        ? "--name: "
        : path.startsWith("dashboardIds")
          ? "--dashboards: "
          : `${path}: `

const usage = (error: InvalidRequest) => new UsageError({ message: `${flagOf(error.path)}${error.message}` })

/**
 * Checks `--name`, `--dashboards a,b` (comma-separated dashboard ids, none for an empty rotation) and `--interval`
 * (whole seconds) against the rules of docs/api.md section 15 ({@link checkRotationBody}), before the database is opened.
 * Fails with a `UsageError` naming the flag.
 */
export const parseBody = (
  name: string,
  dashboards: string | undefined,
  interval: string
): Either.Either<RotationBody, UsageError> => {
  const trimmed = interval.trim()
  const dashboardIds =
    dashboards === undefined
      ? []
      : dashboards
          .split(",")
          .map((id) => id.trim())
          .filter((id) => id !== "")
  return Either.mapLeft(
    checkRotationBody({
      name,
      dashboardIds,
      intervalSeconds: /^[+-]?\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : trimmed
    }),
    usage
  )
}

const dashboardCount = (rotation: Rotation) =>
  rotation.dashboardIds.length === 1 ? "1 dashboard" : `${rotation.dashboardIds.length} dashboards`

/**
 * `rotations create`: creates a rotation of the account's dashboards and prints its view URL (`prefix`: the server's
 * `--base-url` or base path, see `ViewCommands.viewLinkPrefix`) or, with `json`, the rotation as the admin API answers it.
 * A dashboard id that is not one of the account's is a `UsageError` naming it.
 */
export const create = (
  accountId: AccountId,
  body: RotationBody,
  json: boolean,
  prefix = ""
): Effect.Effect<void, UsageError | CommandFailed | StorageFailure, AccountStore | DashboardStore> =>
  Effect.gen(function* () {
    const rotation = yield* Rotations.createRotation(accountId, body).pipe(
      Effect.catchTags({ InvalidRequest: (error) => Effect.fail(usage(error)), ...accountNotFound })
    )
    if (json) return yield* Console.log(JSON.stringify(Rotations.rotationView(rotation, prefix)))
    yield* Console.log(
      `Created rotation ${JSON.stringify(rotation.name)} with id ${rotation.id}: ${dashboardCount(rotation)}, ` +
        `${rotation.intervalSeconds} s each.`
    )
    yield* printLink("rotation", rotation, prefix)
  })

/** Rotations as the `rotations list` and `rotations rotate-token` commands show them (see `ViewCommands`). */
export const views: ViewCommandKind<Rotation> = {
  kind: "rotation",
  list: (accountId) => Rotations.views.list(accountId).pipe(Effect.catchTags(accountNotFound)),
  rotate: (accountId, id) => Rotations.views.rotateToken(accountId, id).pipe(Effect.catchTags(rotationNotFound)),
  toJson: Rotations.rotationView,
  columns: {
    headers: ["DASHBOARDS", "INTERVAL"],
    cells: (r) => [String(r.dashboardIds.length), `${r.intervalSeconds}s`]
  }
}

/**
 * `rotations show`: one rotation (its dashboards in order and its view URL), or with `json` as the admin API answers
 * it; the view URL starts with `prefix`.
 */
export const show = (
  accountId: AccountId,
  rotationId: string,
  json: boolean,
  prefix = ""
): Effect.Effect<void, CommandFailed | StorageFailure, AccountStore | DashboardStore> =>
  Effect.gen(function* () {
    const rotation = yield* Rotations.views.get(accountId, rotationId).pipe(Effect.catchTags(rotationNotFound))
    const view = Rotations.rotationView(rotation, prefix)
    if (json) return yield* Console.log(JSON.stringify(view))
    yield* Console.log(`Rotation ${JSON.stringify(view.name)} with id ${view.id}, created ${view.createdAt}:`)
    yield* Console.log(`${dashboardCount(rotation)}, ${rotation.intervalSeconds} s each, in this order:`)
    for (const id of rotation.dashboardIds) yield* Console.log(`  ${id}`)
    yield* printLink("rotation", rotation, prefix)
  })

/** `rotations delete`: deletes a rotation; its view URL stops working. */
export const remove = (
  accountId: AccountId,
  rotationId: string
): Effect.Effect<void, CommandFailed | StorageFailure, AccountStore | DashboardStore> =>
  Effect.zipRight(
    Rotations.views.delete(accountId, rotationId).pipe(Effect.catchTags(rotationNotFound)),
    Console.log(`Deleted rotation ${rotationId}; its view URL no longer opens.`)
  )
