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
import { viewUrl } from "@dashstream/core"
import { CommandFailed, UsageError } from "./Errors.js"

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

/** A rotation as `--json` prints it: the admin API's body (docs/api.md section 15), `viewToken`/`url` null unless new. */
const rotationJson = (rotation: Rotation, viewToken: string | null = null, basePath = "") =>
  Rotations.rotationView(rotation, viewToken, basePath)

const notFound = {
  RotationNotFound: (error: { readonly message: string }) => new CommandFailed({ message: error.message })
}
const accountNotFound = {
  AccountNotFound: (error: { readonly message: string }) => new CommandFailed({ message: error.message })
}

const printUrl = (viewToken: string, basePath: string) =>
  Effect.zipRight(
    Console.log("View URL path (shown only now; append it to the server's address, share it as a secret):"),
    Console.log(viewUrl(basePath, "rotation", viewToken))
  )

const dashboardCount = (rotation: Rotation) =>
  rotation.dashboardIds.length === 1 ? "1 dashboard" : `${rotation.dashboardIds.length} dashboards`

/**
 * `rotations create`: creates a rotation of the account's dashboards and prints its view URL path `/r/<viewToken>`
 * (shown only now) or, with `json`, the rotation as the admin API answers it. A dashboard id that is not one of the
 * account's is a `UsageError` naming it.
 */
export const create = (
  accountId: AccountId,
  body: RotationBody,
  json: boolean,
  basePath = ""
): Effect.Effect<void, UsageError | CommandFailed | StorageFailure, AccountStore | DashboardStore> =>
  Effect.gen(function* () {
    const { rotation, viewToken } = yield* Rotations.createRotation(accountId, body).pipe(
      Effect.catchTags({ InvalidRequest: (error) => Effect.fail(usage(error)), ...accountNotFound })
    )
    if (json) return yield* Console.log(JSON.stringify(rotationJson(rotation, viewToken, basePath)))
    yield* Console.log(
      `Created rotation ${JSON.stringify(rotation.name)} with id ${rotation.id}: ${dashboardCount(rotation)}, ` +
        `${rotation.intervalSeconds} s each.`
    )
    yield* printUrl(viewToken, basePath)
  })

/**
 * `rotations list`: the account's rotations, oldest first, as a table (id, name, dashboards, interval, created) or,
 * with `json`, `{"rotations": [...]}` as the admin API answers it (`viewToken` and `url` null).
 */
export const list = (
  accountId: AccountId,
  json: boolean
): Effect.Effect<void, CommandFailed | StorageFailure, AccountStore | DashboardStore> =>
  Effect.gen(function* () {
    const rotations = yield* Rotations.listRotations(accountId).pipe(Effect.catchTags(accountNotFound))
    if (json) return yield* Console.log(JSON.stringify({ rotations: rotations.map((r) => rotationJson(r)) }))
    if (rotations.length === 0) return yield* Console.log("The account has no rotations yet.")
    const rows = [
      ["ID", "NAME", "DASHBOARDS", "INTERVAL", "CREATED"],
      ...rotations.map((r) => {
        const view = rotationJson(r)
        return [view.id, view.name, String(r.dashboardIds.length), `${r.intervalSeconds}s`, view.createdAt]
      })
    ]
    const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((row) => row[i]!.length)))
    for (const row of rows) {
      yield* Console.log(row.map((cell, i) => (i < 4 ? cell.padEnd(widths[i]!) : cell)).join("  "))
    }
  })

/** `rotations show`: one rotation (its dashboards in order), or with `json` as the admin API answers it. */
export const show = (
  accountId: AccountId,
  rotationId: string,
  json: boolean
): Effect.Effect<void, CommandFailed | StorageFailure, AccountStore | DashboardStore> =>
  Effect.gen(function* () {
    const rotation = yield* Rotations.getRotation(accountId, rotationId).pipe(
      Effect.catchTags({ ...notFound, ...accountNotFound })
    )
    if (json) return yield* Console.log(JSON.stringify(rotationJson(rotation)))
    const view = rotationJson(rotation)
    yield* Console.log(`Rotation ${JSON.stringify(view.name)} with id ${view.id}, created ${view.createdAt}:`)
    yield* Console.log(`${dashboardCount(rotation)}, ${rotation.intervalSeconds} s each, in this order:`)
    for (const id of rotation.dashboardIds) yield* Console.log(`  ${id}`)
  })

/** `rotations delete`: deletes a rotation; its view URL stops working. */
export const remove = (
  accountId: AccountId,
  rotationId: string
): Effect.Effect<void, CommandFailed | StorageFailure, AccountStore | DashboardStore> =>
  Effect.zipRight(
    Rotations.deleteRotation(accountId, rotationId).pipe(Effect.catchTags({ ...notFound, ...accountNotFound })),
    Console.log(`Deleted rotation ${rotationId}; its view URL no longer opens.`)
  )

/** `rotations rotate-token`: gives a rotation a new view token and prints its new view URL path (the old one stops). */
export const rotateToken = (
  accountId: AccountId,
  rotationId: string,
  json: boolean,
  basePath = ""
): Effect.Effect<void, CommandFailed | StorageFailure, AccountStore | DashboardStore> =>
  Effect.gen(function* () {
    const { rotation, viewToken } = yield* Rotations.rotateRotationViewToken(accountId, rotationId).pipe(
      Effect.catchTags({ ...notFound, ...accountNotFound })
    )
    if (json) return yield* Console.log(JSON.stringify(rotationJson(rotation, viewToken, basePath)))
    yield* Console.log(`Rotation ${rotation.id} has a new view token; the old view URL no longer opens.`)
    yield* printUrl(viewToken, basePath)
  })
