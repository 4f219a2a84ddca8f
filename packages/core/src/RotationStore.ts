import type { Effect, Option } from "effect"
import type { AccountId } from "./Account.js"
import type { DashboardId } from "./Dashboard.js"
import type { AccountNotFound, StorageFailure } from "./Errors.js"
import type { Rotation, RotationId } from "./Rotation.js"
import type { ViewTokenDigest } from "./ViewToken.js"

/**
 * The storage of rotations (docs/api.md section 15), part of the `DashboardStore` port (a rotation lists dashboards, and
 * a deleted dashboard leaves every rotation in the same commit). View tokens are only ever seen by the store as
 * SHA-256 digests, one per rotation, in a namespace of their own (a rotation's digest never finds a dashboard, nor the
 * reverse). Every method that takes an account id and a rotation id finds the rotation only in that account (`None` /
 * `false` otherwise). `dashboardIds` are stored in the order given (the same id may appear more than once) and read
 * back equal, except that a deleted dashboard is gone from every rotation's list (`DashboardStore.delete`). Times are
 * integer microseconds.
 */
export interface RotationStorage {
  /**
   * Stores a new rotation with its view token digest. Its dashboards must be the account's (the caller checks;
   * a dashboard deleted meanwhile is a `StorageFailure`, nothing stored). `AccountNotFound` when the account does not
   * exist.
   */
  readonly createRotation: (
    rotation: Rotation,
    viewToken: ViewTokenDigest
  ) => Effect.Effect<void, AccountNotFound | StorageFailure>
  /** The account's rotations, oldest first (by `createdAt`, then id); `[]` also for an unknown account. */
  readonly listRotations: (account: AccountId) => Effect.Effect<ReadonlyArray<Rotation>, StorageFailure>
  /** One rotation of the account. */
  readonly getRotation: (account: AccountId, id: RotationId) => Effect.Effect<Option.Option<Rotation>, StorageFailure>
  /**
   * Replaces the name, dashboards and interval in one transaction; returns the new version (`createdAt` and the view
   * token unchanged).
   */
  readonly updateRotation: (
    account: AccountId,
    id: RotationId,
    change: {
      readonly name: string
      readonly dashboardIds: ReadonlyArray<DashboardId>
      readonly intervalSeconds: number
    }
  ) => Effect.Effect<Option.Option<Rotation>, StorageFailure>
  /** Deletes a rotation; `false` when there was none. Its view token stops working with it. */
  readonly deleteRotation: (account: AccountId, id: RotationId) => Effect.Effect<boolean, StorageFailure>
  /** Replaces the view token digest: from the commit on, only the new token finds the rotation. */
  readonly setRotationViewToken: (
    account: AccountId,
    id: RotationId,
    viewToken: ViewTokenDigest
  ) => Effect.Effect<Option.Option<Rotation>, StorageFailure>
  /** The rotation whose current view token has this digest. */
  readonly findRotationByViewToken: (
    viewToken: ViewTokenDigest
  ) => Effect.Effect<Option.Option<Rotation>, StorageFailure>
}
