import { Context, type Effect, type Option } from "effect"
import type { Account, AccountId, KeyDigest } from "./Account.js"
import type { AccountNotFound, Conflict, StorageFailure, StreamNotFound } from "./Errors.js"
import type { StreamName } from "./StreamName.js"
import type { Widget } from "./Widget.js"
import type { WidgetType } from "./WidgetType.js"

/**
 * How `AccountStore.lookupWidget` answers, once: the storage failure (then `widget` is `null` and means nothing), or
 * the widget (`null`: the account has no widget of that name).
 */
export type WidgetLookupDone = (error: StorageFailure | undefined, widget: Widget | null) => void

/**
 * The storage port of accounts, access keys and widgets (docs/api.md section 7). Access keys are only ever seen by
 * the store as SHA-256 digests. Times are integer microseconds.
 */
export class AccountStore extends Context.Tag("@dashstream/core/AccountStore")<
  AccountStore,
  {
    /** Stores a new account with its first access key. */
    readonly createAccount: (account: Account, key: KeyDigest) => Effect.Effect<void, StorageFailure>
    /** The account, if it exists. */
    readonly getAccount: (id: AccountId) => Effect.Effect<Option.Option<Account>, StorageFailure>
    /**
     * Every account, oldest first (by `createdAt`, then by id), for the admin API's list (docs/api.md section 14). Access
     * keys are not part of an account: nothing here can show one.
     */
    readonly listAccounts: Effect.Effect<ReadonlyArray<Account>, StorageFailure>
    /** Number of accounts (0 on a new database). */
    readonly countAccounts: Effect.Effect<number, StorageFailure>
    /**
     * Adds an access key to an account; with `revokeOthers`, every other key of the account stops working in the
     * same transaction.
     */
    readonly addAccessKey: (
      id: AccountId,
      key: KeyDigest,
      createdAt: number,
      revokeOthers: boolean
    ) => Effect.Effect<void, AccountNotFound | StorageFailure>
    /** The account an access key digest belongs to, unless unknown or revoked. */
    readonly findAccountByKey: (key: KeyDigest) => Effect.Effect<Option.Option<AccountId>, StorageFailure>
    /**
     * For the push and read hot paths (no effect per request): the account of an access key, as sent (the store
     * digests it, `digestAccessKey`, as it holds digests only), when the store can tell it synchronously (a cache
     * hit, see `cachedAccountStore`, or a synchronous read: SQLite, memory), else `undefined` (an empty or unknown
     * key, a failed read, or a store that cannot read synchronously: PostgreSQL), in which case the caller asks
     * {@link findAccountByKey}, which also gives every refusal and error. Never answers for a key that
     * `findAccountByKey` would refuse, except within the cache's time to live.
     */
    readonly peekAccount: (accessKey: string) => AccountId | undefined
    /**
     * For the hot paths: the widget of a stream name when the store can tell it synchronously (a cache hit, or a
     * synchronous read); `null` when it can tell synchronously that the account has no widget of that name (a
     * remembered absence, or a synchronous read that found none); else `undefined` (a cache miss, a failed read, a
     * store that cannot read synchronously), in which case the caller asks {@link findWidgets}. Never `null` for a
     * name that `findWidgets` would find, nor a widget it would not, except within the cache's time to live (a widget
     * created or deleted through another process). `nowMillis` is the caller's `Date.now()`, read once for the
     * names of one request (a cache compares it with its entries' expiry; `Date.now()` per name was 4-7 µs per
     * 100-stream push); without it the store reads the clock itself.
     */
    readonly peekWidget: (id: AccountId, name: string, nowMillis?: number) => Widget | null | undefined
    /**
     * For the read hot path of a store that cannot read synchronously (PostgreSQL); optional, left out by stores
     * that can ({@link peekWidget} answers for them): the widget of stream name `name` of account `id` without an
     * effect, as {@link findWidgets} of that one name answers it (`null`: the account has no widget of that name), or
     * the storage failure (`StorageUnavailable`, `StorageError`). `done` is called once. Measured: a fiber
     * suspended on the effect's query per read of an uncached stream kept about 2 KB of every read alive past a
     * young-generation collection, which the 64 MiB semi-spaces gather into pauses of up to 15 ms.
     */
    readonly lookupWidget?: ((id: AccountId, name: string, done: WidgetLookupDone) => void) | undefined
    /** Declares a widget; `Conflict` if the account already has that stream name. */
    readonly createWidget: (
      id: AccountId,
      streamName: StreamName,
      type: WidgetType,
      createdAt: number
    ) => Effect.Effect<Widget, AccountNotFound | Conflict | StorageFailure>
    /** The account's widgets, ordered by stream name. */
    readonly listWidgets: (id: AccountId) => Effect.Effect<ReadonlyArray<Widget>, AccountNotFound | StorageFailure>
    /** The widgets of these stream names that exist in the account (missing names are absent from the map). */
    readonly findWidgets: (
      id: AccountId,
      names: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyMap<string, Widget>, StorageFailure>
    /** Deletes a widget and every stored entry of its stream. */
    readonly deleteWidget: (
      id: AccountId,
      streamName: string
    ) => Effect.Effect<void, AccountNotFound | StreamNotFound | StorageFailure>
  }
>() {}
