import { Schema } from "effect"

/**
 * A stream name (contract section 2): 1 to 255 characters, no control characters, no `/`.
 * Unique per account; two accounts may use the same name.
 */
export const StreamName = Schema.String.pipe(
  Schema.minLength(1, { message: () => "stream name must not be empty" }),
  Schema.maxLength(255, { message: () => "stream name must be at most 255 characters" }),
  Schema.filter((s) => !/[\u0000-\u001f\u007f/]/.test(s), {
    message: () => "stream name must not contain control characters or '/'"
  }),
  Schema.brand("StreamName")
)
export type StreamName = typeof StreamName.Type
