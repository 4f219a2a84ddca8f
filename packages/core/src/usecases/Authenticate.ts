import { Effect, Option } from "effect"
import { type AccountId, digestAccessKey } from "../Account.js"
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
