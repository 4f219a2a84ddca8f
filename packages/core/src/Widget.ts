import type { AccountId } from "./Account.js"
import type { StreamName } from "./StreamName.js"
import type { WidgetType } from "./WidgetType.js"

/** The storage id of a stream; opaque outside the adapter that made it. */
export type StreamId = number & { readonly StreamId: unique symbol }

/**
 * A widget: one stream of one account with one widget type, declared when the widget is created
 * (docs/api.md section 2). `createdAt` in integer microseconds.
 */
export interface Widget {
  readonly id: StreamId
  readonly accountId: AccountId
  readonly streamName: StreamName
  readonly type: WidgetType
  readonly createdAt: number
}
