import { type AccountId, AlertAdmin, type AlertRule, type InvalidRequest, type Receiver } from "@dashstream/core"
import { Console, Effect } from "effect"
import { CommandFailed, UsageError } from "./Errors.js"
import * as NotificationSender from "./NotificationSender.js"
import { printTable } from "./ViewCommands.js"

/**
 * The `alerts rules` and `alerts receivers` commands (docs/api.md sections 8 and 18), apart from the command table of
 * `Cli.ts`: the flags become the admin API's body, which core's `AlertAdmin` checks as it checks the API's; what they
 * print. Exit codes as docs/api.md section 8 says: a flag value the API would refuse with 400 is a usage error (2)
 * naming the flag; an unknown rule or receiver, an unreachable receiver or a failing store is a runtime failure (1).
 */

/** The flags of a rule, as given (`receivers`: each `--receiver`, in order). */
export interface RuleFlags {
  readonly name: string
  readonly stream: string
  readonly above: string | undefined
  readonly below: string | undefined
  readonly noDataFor: string | undefined
  readonly for: string | undefined
  readonly receivers: ReadonlyArray<string>
}

/** The flags of a receiver, as given. */
export interface ReceiverFlags {
  readonly name: string
  readonly kind: string
  readonly url: string
  readonly secret: string | undefined
}

/** A number flag as the body's number when it is written as one, else as given (the body's check refuses it). */
const numberOf = (text: string): number | string => {
  const trimmed = text.trim()
  return /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(trimmed) ? Number(trimmed) : text
}

/** A rule body `{"name", "streamName", "condition", "for"?, "receiverIds"}` (docs/api.md section 18.1) from flags. */
export const ruleBody = (flags: RuleFlags): Record<string, unknown> => {
  const condition: Record<string, unknown> = {}
  if (flags.above !== undefined) condition["above"] = numberOf(flags.above)
  if (flags.below !== undefined) condition["below"] = numberOf(flags.below)
  if (flags.noDataFor !== undefined) condition["noDataFor"] = numberOf(flags.noDataFor)
  return {
    name: flags.name,
    streamName: flags.stream,
    condition,
    ...(flags.for === undefined ? {} : { for: numberOf(flags.for) }),
    receiverIds: flags.receivers
  }
}

/** The flag a body path comes from (`receiverIds[1]` is the second `--receiver`). */
const flagOf = (path: string | undefined): string => {
  if (path === undefined) return ""
  const field = path.split(/[.[]/)[0]!
  const flags: Record<string, string> = {
    name: "--name",
    streamName: "--stream",
    condition: "--above, --below or --no-data-for",
    for: "--for",
    receiverIds: "--receiver",
    kind: "--kind",
    url: "--url",
    secret: "--secret"
  }
  return `${flags[field] ?? path}: `
}

const usage = (error: InvalidRequest) => new UsageError({ message: `${flagOf(error.path)}${error.message}` })
const failed = (error: { readonly message: string }) => Effect.fail(new CommandFailed({ message: error.message }))

/** The runtime failures of these commands (for `Effect.catchTags`): an unknown account, rule or receiver. */
const accountNotFound = { AccountNotFound: failed } as const
const ruleNotFound = { AccountNotFound: failed, AlertRuleNotFound: failed } as const
const receiverNotFound = { AccountNotFound: failed, ReceiverNotFound: failed } as const

const conditionText = (rule: AlertRule): string => {
  const c = rule.condition
  return "above" in c ? `above ${c.above}` : "below" in c ? `below ${c.below}` : `no data for ${c.noDataFor} s`
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`

/**
 * `alerts rules create`: creates a rule of the account and prints it, or with `json` as the admin API answers it.
 * A flag the rule's checks refuse is a `UsageError` naming it.
 */
export const createRule = (accountId: AccountId, flags: RuleFlags, json: boolean) =>
  Effect.gen(function* () {
    const rule = yield* AlertAdmin.createRule(accountId, ruleBody(flags)).pipe(
      Effect.catchTags({ InvalidRequest: (error) => Effect.fail(usage(error)), ...accountNotFound })
    )
    if (json) return yield* Console.log(JSON.stringify(AlertAdmin.ruleJson(rule)))
    yield* Console.log(
      `Created alert rule ${JSON.stringify(rule.name)} with id ${rule.id}: ${rule.streamName} ${conditionText(rule)}` +
        `${rule.for === 0 ? "" : ` for ${rule.for} s`}, notifying ${plural(rule.receiverIds.length, "receiver")}.`
    )
  })

/** `alerts rules list`: the account's rules with their state, oldest first, or with `json` `{"rules": [...]}`. */
export const listRules = (accountId: AccountId, json: boolean) =>
  Effect.gen(function* () {
    const rules = yield* AlertAdmin.rules.list(accountId).pipe(Effect.catchTags(accountNotFound))
    if (json) return yield* Console.log(JSON.stringify({ rules: rules.map(AlertAdmin.ruleJson) }))
    if (rules.length === 0) return yield* Console.log("The account has no alert rules yet.")
    yield* printTable([
      ["ID", "NAME", "STREAM", "CONDITION", "FOR", "STATE", "SINCE"],
      ...rules.map((rule) => {
        const shown = AlertAdmin.ruleJson(rule)
        const silenced = shown.silencedUntil === null ? "" : ` (silenced until ${shown.silencedUntil})`
        return [
          shown.id,
          shown.name,
          shown.streamName,
          conditionText(rule),
          `${shown.for}s`,
          `${shown.state}${silenced}`,
          shown.stateSince
        ]
      })
    ])
  })

/** `alerts rules delete`: deletes a rule; its transitions stay in the history. */
export const deleteRule = (accountId: AccountId, id: string) =>
  Effect.zipRight(
    AlertAdmin.rules.delete(accountId, id).pipe(Effect.catchTags(ruleNotFound)),
    Console.log(`Deleted alert rule ${id}.`)
  )

/**
 * `alerts receivers create`: creates a receiver of the account and prints it (never its secret), or with `json` as
 * the admin API answers it. A flag the receiver's checks refuse is a `UsageError` naming it.
 */
export const createReceiver = (accountId: AccountId, flags: ReceiverFlags, json: boolean) =>
  Effect.gen(function* () {
    const body = {
      name: flags.name,
      kind: flags.kind,
      url: flags.url,
      ...(flags.secret === undefined ? {} : { secret: flags.secret })
    }
    const receiver = yield* AlertAdmin.createReceiver(accountId, body).pipe(
      Effect.catchTags({ InvalidRequest: (error) => Effect.fail(usage(error)), ...accountNotFound })
    )
    if (json) return yield* Console.log(JSON.stringify(AlertAdmin.receiverJson(receiver)))
    const signed = receiver.hasSecret ? ", signing with its secret" : ""
    yield* Console.log(
      `Created ${receiver.kind} receiver ${JSON.stringify(receiver.name)} with id ${receiver.id}${signed}.`
    )
  })

/** `alerts receivers list`: the account's receivers, oldest first, or with `json` `{"receivers": [...]}`. */
export const listReceivers = (accountId: AccountId, json: boolean) =>
  Effect.gen(function* () {
    const receivers = yield* AlertAdmin.receivers.list(accountId).pipe(Effect.catchTags(accountNotFound))
    if (json) return yield* Console.log(JSON.stringify({ receivers: receivers.map(AlertAdmin.receiverJson) }))
    if (receivers.length === 0) return yield* Console.log("The account has no receivers yet.")
    yield* printTable([
      ["ID", "NAME", "KIND", "SECRET", "CREATED", "URL"],
      ...receivers.map((receiver: Receiver) => {
        const shown = AlertAdmin.receiverJson(receiver)
        return [shown.id, shown.name, shown.kind, shown.hasSecret ? "yes" : "no", shown.createdAt, shown.url]
      })
    ])
  })

/** `alerts receivers delete`: deletes a receiver; its id leaves every rule. */
export const deleteReceiver = (accountId: AccountId, id: string) =>
  Effect.zipRight(
    AlertAdmin.receivers.delete(accountId, id).pipe(Effect.catchTags(receiverNotFound)),
    Console.log(`Deleted receiver ${id}; it left every rule that notified it.`)
  )

/**
 * `alerts receivers test`: sends the receiver one test notification of its kind (docs/api.md section 18.4) and prints
 * its HTTP status, whatever it is, or with `json` `{"status"}`; no answer is a runtime failure with the reason.
 */
export const testReceiver = (accountId: AccountId, id: string, json: boolean) =>
  Effect.gen(function* () {
    const answer = yield* AlertAdmin.testReceiver(accountId, id).pipe(
      Effect.catchTags({ ...receiverNotFound, ReceiverUnreachable: failed }),
      Effect.provide(NotificationSender.layer)
    )
    if (json) return yield* Console.log(JSON.stringify(answer))
    yield* Console.log(`Sent a test notification; the receiver answered HTTP ${answer.status}.`)
  })
