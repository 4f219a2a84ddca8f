import { Context } from "effect"
import { AccountStore } from "./AccountStore.js"
import { AlertStore } from "./alerts/AlertStore.js"
import { ChangeFeed } from "./ChangeFeed.js"
import { DashboardStore } from "./DashboardStore.js"
import { DecimationStore } from "./DecimationStore.js"
import { SessionStore } from "./SessionStore.js"
import { StreamStore } from "./StreamStore.js"

/**
 * The storage ports every backend provides, declared once: each adapter's `make` (SQLite, PostgreSQL, memory) returns
 * their services, and its `layer` provides them through {@link storageContext}. A new port is one more field here and
 * one more line there; the compiler then finds every backend that lacks it.
 */
export interface StorageServices {
  /** Streams and their entries (docs/api.md sections 3 to 6). */
  readonly streamStore: Context.Tag.Service<StreamStore>
  /** Accounts, access keys and widgets (sections 7 and 14). */
  readonly accountStore: Context.Tag.Service<AccountStore>
  /** Decimation passes (section 9). */
  readonly decimationStore: Context.Tag.Service<DecimationStore>
  /** Dashboards and rotations (sections 11 and 15). */
  readonly dashboardStore: Context.Tag.Service<DashboardStore>
  /** Live updates (section 10): the changes committed by every process sharing the database. */
  readonly changeFeed: Context.Tag.Service<ChangeFeed>
  /** Console sign-outs (section 14), seen by every process sharing the database. */
  readonly sessionStore: Context.Tag.Service<SessionStore>
  /** Alert rules, receivers and their outbox (section 18). */
  readonly alertStore: Context.Tag.Service<AlertStore>
}

/** The tags of the {@link StorageServices}: what a backend's layer provides. */
export type StoragePorts =
  StreamStore | AccountStore | DecimationStore | DashboardStore | ChangeFeed | SessionStore | AlertStore

/** The context holding each of `services` under its port's tag (for `Layer.scopedContext` / `Layer.effectContext`). */
export const storageContext = (services: StorageServices): Context.Context<StoragePorts> =>
  Context.make(StreamStore, services.streamStore).pipe(
    Context.add(AccountStore, services.accountStore),
    Context.add(DecimationStore, services.decimationStore),
    Context.add(DashboardStore, services.dashboardStore),
    Context.add(ChangeFeed, services.changeFeed),
    Context.add(SessionStore, services.sessionStore),
    Context.add(AlertStore, services.alertStore)
  )
