import { Effect, Option } from "effect"
import { type AccountId, digestAccessKey, type KeyDigest } from "../Account.js"
import { AccountStore } from "../AccountStore.js"
import { Forbidden, type StorageFailure } from "../Errors.js"

const forbidden = new Forbidden({ message: "the access key is missing or unknown" })

/**
 * The account an access key belongs to (spec section 5). Fails with `Forbidden` for an empty, unknown or revoked
 * key.
 */
export const authenticate = (accessKey: string): Effect.Effect<AccountId, Forbidden | StorageFailure, AccountStore> =>
  accessKey === ""
    ? Effect.fail(forbidden)
    : Effect.flatMap(AccountStore, (store) =>
        Effect.flatMap(store.findAccountByKey(digestAccessKey(accessKey)), (found) =>
          Option.match(found, { onNone: () => Effect.fail(forbidden), onSome: Effect.succeed })
        )
      )

/** At most this many access keys have their digest remembered by {@link peekAccountOfKey}; past it, it starts again. */
const maxRememberedDigests = 10_000
const rememberedDigests = new Map<string, KeyDigest>()

/**
 * The account of an access key when `peekAccount` knows it without an effect (see
 * `AccountStore.peekAccountByKey`), else `undefined`: an empty or unknown key is left to {@link authenticate}, which
 * refuses it. The digest of a known key is remembered ({@link digestAccessKey}, a SHA-256 per push, was ~4% of the
 * push path's CPU, issue 12); only known keys are, so unknown keys sent over and over cannot fill the memory, which
 * holds nothing a request does not carry anyway.
 */
export const peekAccountOfKey = (
  accessKey: string,
  peekAccount: (key: KeyDigest) => AccountId | undefined
): AccountId | undefined => {
  if (accessKey === "") return undefined
  const digest = rememberedDigests.get(accessKey) ?? digestAccessKey(accessKey)
  const accountId = peekAccount(digest)
  if (accountId === undefined) return undefined
  if (rememberedDigests.size >= maxRememberedDigests) rememberedDigests.clear()
  rememberedDigests.set(accessKey, digest)
  return accountId
}
