import {
  type AccountStore,
  alertEngineLayer,
  AlertStore,
  type ChangeFeed,
  type DeliveryOutcome,
  makeAlertDeliverer,
  type ReceiverKind,
  type StreamStore
} from "@dashstream/core"
import { type Context, Effect, Layer, Option, type Scope } from "effect"
import * as NotificationSender from "./NotificationSender.js"

/**
 * Alerts in `serve` (docs/api.md section 18): the alert engine (evaluation on the change feed and at deadlines) and
 * the deliverer (the outbox sent to receivers over HTTP, `NotificationSender.ts`), started on the storage the server
 * opened and stopped before it is closed.
 *
 * Which process runs them: the one process of `serve --workers 1`; under `serve --workers N`, the one worker that
 * also runs the daily decimation pass (the primary picks it), which sees every worker's pushes through the change
 * feed (shared SQLite file: the relay; PostgreSQL: `LISTEN`/`NOTIFY`). Separate `serve` processes on one PostgreSQL
 * each run both: the store keeps that correct (an evaluation is stored only over the rule version it was computed
 * from; a delivery, and an Alertmanager re-send, is claimed by one process at a time with `FOR UPDATE SKIP LOCKED`).
 * A deliverer's leases carry its lease owner: the leases of a process that died are taken again at once, on SQLite
 * by the next process to start alerts, on PostgreSQL by any live one (see `AlertStore`).
 */

/** What alerts report to `/metrics` (`Metrics` of `@dashstream/http` has both). */
export interface AlertFigures {
  /** Transitions stored, by direction. */
  readonly alertTransition: (to: "firing" | "resolved", count?: number) => void
  /** Delivery attempts recorded, by receiver kind and outcome. */
  readonly alertDelivery: (kind: ReceiverKind, outcome: DeliveryOutcome) => void
}

type Stores = AlertStore | AccountStore | ChangeFeed | StreamStore

/**
 * The store the engine writes through: `commitEvaluations` as the storage's, then the stored transitions counted
 * and the deliverer woken so that the first attempt is made at once (docs/api.md section 18: within a second).
 */
const observedStore = (
  store: AlertStore["Type"],
  figures: AlertFigures,
  wake: Effect.Effect<void>
): AlertStore["Type"] => ({
  ...store,
  commitEvaluations: (commits) =>
    Effect.tap(store.commitEvaluations(commits), (stored) => {
      let firing = 0
      let resolved = 0
      let sent = false
      stored.forEach((rule, i) => {
        if (Option.isNone(rule)) return
        for (const transition of commits[i]!.transitions) {
          if (transition.to === "firing") firing++
          else resolved++
          if (!transition.silenced) sent = true
        }
      })
      if (firing > 0) figures.alertTransition("firing", firing)
      if (resolved > 0) figures.alertTransition("resolved", resolved)
      return sent ? wake : Effect.void
    })
})

/**
 * Starts the deliverer, then the engine, on `storage` in a fiber of the current scope (see the module comment), and
 * returns at once: a database that does not answer (PostgreSQL down after `serve` migrated) holds up alerts only,
 * never the server's start. The deliverer logs "alerts wait for the database" and takes its lease owner when the
 * database answers; the engine then loads its rules (retried the same way) and logs `alert engine and deliverer
 * started`. They stop when the scope closes: the engine first (work queued but not stored is found again from the
 * cursors at the next start), then the deliverer (an attempt in flight is interrupted and its lease released: the
 * next run sends it).
 */
export const start = (
  storage: Context.Context<Stores>,
  figures: AlertFigures
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.asVoid(Effect.forkScoped(Effect.scoped(Effect.zipRight(started(storage, figures), Effect.never))))

// The deliverer, then the engine, in the current scope; completes once both run.
const started = (storage: Context.Context<Stores>, figures: AlertFigures): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const deliverer = yield* makeAlertDeliverer({
      onAttempt: (kind, outcome) => figures.alertDelivery(kind, outcome)
    }).pipe(Effect.provide(NotificationSender.layer), Effect.provide(storage))
    const engineStores = Layer.succeedContext(storage).pipe(
      Layer.merge(
        Layer.effect(
          AlertStore,
          Effect.map(AlertStore, (store) => observedStore(store, figures, deliverer.wake))
        ).pipe(Layer.provide(Layer.succeedContext(storage)))
      )
    )
    yield* Layer.build(alertEngineLayer.pipe(Layer.provide(engineStores)))
    yield* Effect.logInfo("alert engine and deliverer started")
  })
