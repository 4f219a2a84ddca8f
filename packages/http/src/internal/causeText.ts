import { inspect } from "node:util"
import { Cause } from "effect"
import { scrub } from "./redact.js"

/** An error with its stack, anything else inspected a few levels deep (never by recursion into the whole value). */
const describe = (u: unknown): string =>
  u instanceof Error ? (u.stack ?? `${u.name}: ${u.message}`) : inspect(u, { depth: 3, breakLength: 120 })

/**
 * `Cause.pretty`, or each failure and defect described on its own line when it throws: effect's formatter recurses
 * into the values it prints, and one nested deeply enough (issue 22 item 5: a request body 5,000 levels deep)
 * overflows the stack.
 */
const pretty = (cause: Cause.Cause<unknown>): string => {
  try {
    return Cause.pretty(cause)
  } catch {
    return [...Cause.failures(cause), ...Cause.defects(cause)].map(describe).join("\n")
  }
}

/**
 * The text logged for a request answered 500: the cause as `Cause.pretty` prints it, followed by the `cause` chain
 * of each error (`Cause.pretty` omits it, and a `StorageError`'s driver error is what an operator needs), with
 * `secret` (the request's access key, when known) scrubbed out. Never throws, whatever the cause carries.
 */
export const causeText = (cause: Cause.Cause<unknown>, secret: string | undefined): string => {
  const lines = [pretty(cause)]
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
