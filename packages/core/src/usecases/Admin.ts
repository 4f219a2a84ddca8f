import { Effect, Either, Schema } from "effect"
import { type Account, type AccountId, digestAccessKey, newAccessKey, newAccountId } from "../Account.js"
import { AccountStore } from "../AccountStore.js"
import { type AccountNotFound, InvalidRequest, quoted, type StorageFailure, type StreamNotFound } from "../Errors.js"
import { StreamStore, type StoredEntry } from "../StreamStore.js"
import { StreamName } from "../StreamName.js"
import { longerThan } from "../TextLength.js"
import { nowMicros } from "../Time.js"
import type { Widget } from "../Widget.js"
import { isWidgetType, widgetTypes } from "../WidgetType.js"
import { latestOnly } from "./Read.js"

/**
 * The admin use cases (docs/api.md sections 7 and 14): accounts, access keys and widgets, as the admin API and the CLI
 * call them.
 */

/** A new account as the admin API and CLI show it: the access key is shown only here (docs/api.md section 7). */
export interface CreatedAccount {
  readonly id: AccountId
  readonly name: string
  readonly accessKey: string
}

/** The longest account name, in characters (code points). */
export const MAX_ACCOUNT_NAME_LENGTH = 200

/**
 * Creates an account with a fresh random access key (256 bits; stored only as its SHA-256 digest). Fails with
 * `InvalidRequest` (path `name`) for a name over {@link MAX_ACCOUNT_NAME_LENGTH} characters.
 */
export const createAccount = (
  name: string = ""
): Effect.Effect<CreatedAccount, InvalidRequest | StorageFailure, AccountStore> =>
  Effect.gen(function* () {
    if (longerThan(name, MAX_ACCOUNT_NAME_LENGTH)) {
      return yield* new InvalidRequest({
        message: `account name must be at most ${MAX_ACCOUNT_NAME_LENGTH} characters`,
        path: "name"
      })
    }
    const store = yield* AccountStore
    const id = newAccountId()
    const accessKey = newAccessKey()
    yield* store.createAccount({ id, name, createdAt: nowMicros() }, digestAccessKey(accessKey))
    return { id, name, accessKey }
  })

/**
 * Adds a new access key to an account and returns it (docs/api.md section 7); with `revokeOthers` every older key
 * stops working. Fails with `AccountNotFound`.
 */
export const addAccessKey = (
  accountId: string,
  revokeOthers: boolean
): Effect.Effect<{ readonly accessKey: string }, AccountNotFound | StorageFailure, AccountStore> =>
  Effect.gen(function* () {
    const store = yield* AccountStore
    const accessKey = newAccessKey()
    yield* store.addAccessKey(accountId as AccountId, digestAccessKey(accessKey), nowMicros(), revokeOthers)
    return { accessKey }
  })

/**
 * Declares a widget (docs/api.md section 7). Fails with `InvalidRequest` for a bad stream name (docs/api.md section 2) or
 * an unknown type (the message lists the 20 types), `Conflict` if the name is taken, `AccountNotFound`.
 */
export const createWidget = (accountId: string, streamName: unknown, type: unknown) =>
  Effect.gen(function* () {
    const name = Schema.decodeUnknownEither(StreamName)(streamName)
    if (Either.isLeft(name)) {
      const message = typeof streamName === "string" ? messageOf(name.left) : "streamName must be a string"
      return yield* new InvalidRequest({ message, path: "streamName" })
    }
    if (typeof type !== "string" || !isWidgetType(type)) {
      return yield* new InvalidRequest({
        message: `unknown widget type ${typeof type === "string" ? quoted(type) : JSON.stringify(type)}; the types are: ${widgetTypes.join(", ")}`,
        path: "type"
      })
    }
    const store = yield* AccountStore
    return yield* store.createWidget(accountId as AccountId, name.right, type, nowMicros())
  })

const messageOf = (error: { readonly message: string }): string => {
  const lines = error.message.split("\n")
  return lines[lines.length - 1]!.trim().replace(/^└─ /, "")
}

/** The account's widgets, ordered by stream name. Fails with `AccountNotFound`. */
export const listWidgets = (
  accountId: string
): Effect.Effect<ReadonlyArray<Widget>, AccountNotFound | StorageFailure, AccountStore> =>
  Effect.flatMap(AccountStore, (store) => store.listWidgets(accountId as AccountId))

/**
 * Every account, oldest first (docs/api.md section 14, `GET /admin/accounts`): id, name and creation time (integer
 * microseconds). Access keys exist only as digests and are never part of it.
 */
export const listAccounts: Effect.Effect<ReadonlyArray<Account>, StorageFailure, AccountStore> = Effect.flatMap(
  AccountStore,
  (store) => store.listAccounts
)

/** A widget and the latest entry of its stream (`null` when the stream is empty). */
export interface WidgetWithLatest {
  readonly widget: Widget
  readonly latest: StoredEntry | null
}

/**
 * The account's widgets, ordered by stream name, each with the latest entry of its stream (docs/api.md section 14:
 * the console shows each widget's latest value and its age), as an export read without `since` would give it. The
 * latest entries are read together (PostgreSQL answers latest-entry reads asked at once with one query). Fails with
 * `AccountNotFound`.
 */
export const listWidgetsWithLatest = (
  accountId: string
): Effect.Effect<ReadonlyArray<WidgetWithLatest>, AccountNotFound | StorageFailure, AccountStore | StreamStore> =>
  Effect.gen(function* () {
    const widgets = yield* listWidgets(accountId)
    const streams = yield* StreamStore
    return yield* Effect.forEach(
      widgets,
      (widget) =>
        Effect.map(streams.read(widget.id, latestOnly), (entries) => ({ widget, latest: entries[0] ?? null })),
      { concurrency: 256 }
    )
  })

/** Deletes a widget and its stream's data (docs/api.md section 7). Fails with `AccountNotFound` or `StreamNotFound`. */
export const deleteWidget = (
  accountId: string,
  streamName: string
): Effect.Effect<void, AccountNotFound | StreamNotFound | StorageFailure, AccountStore> =>
  Effect.flatMap(AccountStore, (store) => store.deleteWidget(accountId as AccountId, streamName))
