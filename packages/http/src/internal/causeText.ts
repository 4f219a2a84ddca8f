import { inspect } from "node:util"
import { Cause } from "effect"
import { scrub } from "./redact.js"

/** An error with its stack, anything else inspected a few levels deep (never by recursion into the whole value). */
const describe = (u: unknown): string =>
  u instanceof Error ? (u.stack ?? `${u.name}: ${u.message}`) : inspect(u, { depth: 3, breakLength: 120 })

/**
 * `Cause.pretty`, or each failure and defect described on its own line when it throws: effect's formatter recurses
 * into the values it prints, and one nested deeply enough (a request body 5,000 levels deep)
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

/** An error's message on its own (an `AggregateError`'s inner messages when it has none), else the value inspected. */
const messageOf = (u: unknown): string => {
  if (u instanceof Error) {
    const inner = (u as { errors?: unknown }).errors
    if (u.message === "" && Array.isArray(inner) && inner.length > 0) return inner.map(messageOf).join("; ")
    return u.message === "" ? u.name : u.message
  }
  return inspect(u, { depth: 1, breakLength: Number.POSITIVE_INFINITY })
}

/**
 * The underlying reason of `cause` in one line, without a stack, for a log line an operator reads: the message at the
 * end of the `cause` chain of its first failure or defect (the driver's `connect ECONNREFUSED 127.0.0.1:5432` inside
 * a `StorageUnavailable`; the error's `_tag` when it carries no cause), with `secret` scrubbed out; `interrupted` for
 * an interruption. Never throws.
 */
export const causeLine = (cause: Cause.Cause<unknown>, secret: string | undefined): string => {
  const first = [...Cause.failures(cause), ...Cause.defects(cause)][0]
  if (first === undefined) return "interrupted"
  let current: unknown = first
  for (let depth = 0; depth < 5; depth++) {
    const next = typeof current === "object" && current !== null ? (current as { cause?: unknown }).cause : undefined
    if (next === undefined || next === null) break
    current = next
  }
  const tag = typeof current === "object" && current !== null ? (current as { _tag?: unknown })._tag : undefined
  const text = current === first && typeof tag === "string" ? tag : messageOf(current)
  return scrub(text.replace(/\s*\n\s*/g, " ").trim(), secret)
}
