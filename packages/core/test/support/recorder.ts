import { Effect } from "effect"
import type { DashboardSink } from "../../src/FollowDashboard.js"

/** The kinds of event a {@link recorder} may write down. */
export type RecordedKind =
  "snapshot" | "entry" | "clear" | "deleted" | "layout" | "alerts" | "failed" | "overflowed" | "live"

const allKinds: ReadonlyArray<RecordedKind> = [
  "snapshot",
  "entry",
  "clear",
  "deleted",
  "layout",
  "alerts",
  "failed",
  "overflowed",
  "live"
]

/**
 * A sink of a dashboard's or a rotation's event stream that records each event of `kinds` (all by default) as
 * `<kind> <data>`: a snapshot once its last piece is in, as `snapshot <snapshot(text)>`; the layout event under
 * `layoutName` (`rotation` on a rotation's stream); `failed <tag>`, `overflowed`, `live <true|false>`. Every piece of a
 * snapshot is kept in `pieces`. `writable` completes when `gate` says so (at once by default).
 */
export const recorder = (
  options: {
    readonly kinds?: ReadonlyArray<RecordedKind>
    readonly layoutName?: string
    readonly snapshot?: (text: string) => string
  } = {}
) => {
  const { kinds = allKinds, layoutName = "layout", snapshot: shown = (text: string) => text } = options
  const events: Array<string> = []
  const pieces: Array<string> = []
  const record = (kind: RecordedKind, text: string) => {
    if (kinds.includes(kind)) events.push(text)
  }
  let snapshot = ""
  let open = true
  const waiting: Array<() => void> = []
  const sink: DashboardSink = {
    snapshot: (part, last) => {
      pieces.push(part)
      snapshot += part
      if (!last) return
      const text = snapshot
      snapshot = ""
      record("snapshot", `snapshot ${shown(text)}`)
    },
    entry: (d) => record("entry", `entry ${d}`),
    clear: (d) => record("clear", `clear ${d}`),
    deleted: (d) => record("deleted", `deleted ${d}`),
    layout: (d) => record("layout", `${layoutName} ${d}`),
    alerts: (d) => record("alerts", `alerts ${d}`),
    failed: (e) => record("failed", `failed ${e._tag}`),
    overflowed: () => record("overflowed", "overflowed"),
    writable: Effect.async<void>((resume) => {
      if (open) return resume(Effect.void)
      waiting.push(() => resume(Effect.void))
    }),
    live: (isLive) => record("live", `live ${isLive}`)
  }
  return {
    events,
    pieces,
    sink,
    /** Stops (`false`) or lets through (`true`) the sink's `writable`. */
    gate: (isOpen: boolean) => {
      open = isOpen
      if (isOpen) for (const w of waiting.splice(0)) w()
    },
    /** The events without the `live` notices. */
    sent: () => events.filter((e) => !e.startsWith("live "))
  }
}
