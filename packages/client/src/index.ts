/**
 * `@dashstream/client`: a typed client of the Dashstream push, export and live-update API (docs/api.md sections 3-6 and
 * 10) for Node >= 20 and browsers. It uses `fetch` only and has no dependency.
 */
export {
  Dashstream,
  type BatchOptions,
  type CallOptions,
  type DashstreamOptions,
  type RangeOptions,
  type ReadOptions,
  type RetryOptions,
  type StreamOf,
  type StreamPush
} from "./Dashstream.js"
export * from "./Errors.js"
export { Follow, type FollowEvent, type FollowOptions, MalformedEvent } from "./Follow.js"
export type * from "./Point.js"
export * from "./WidgetType.js"
