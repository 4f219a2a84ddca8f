import { inspect } from "node:util"
import { Cause } from "effect"
import { scrub } from "./redact.js"

const describe = (u: unknown): string =>
  u instanceof Error ? (u.stack ?? `${u.name}: ${u.message}`) : inspect(u, { depth: 3, breakLength: 120 })

/**
 * The text logged for a request answered 500: the cause as `Cause.pretty` prints it, followed by the `cause` chain
 * of each error (`Cause.pretty` omits it, and a `StorageError`'s driver error is what an operator needs), with
 * `secret` (the request's access key, when known) scrubbed out.
 */
export const causeText = (cause: Cause.Cause<unknown>, secret: string | undefined): string => {
  const lines = [Cause.pretty(cause)]
  for (const error of [...Cause.failures(cause), ...Cause.defects(cause)]) {
    let current: unknown =
      typeof error === "object" && error !== null ? (error as { cause?: unknown }).cause : undefined
    for (let depth = 0; depth < 5 && current !== undefined; depth++) {
      lines.push(`caused by: ${describe(current)}`)
      current = typeof current === "object" && current !== null ? (current as { cause?: unknown }).cause : undefined
    }
  }
  return scrub(lines.join("\n"), secret)
}
