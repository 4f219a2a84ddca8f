import { parseArgs } from "node:util"
import {
  type AccountId,
  type AccountStore,
  type DashboardStore,
  StorageError,
  type StorageFailure,
  StorageUnavailable,
  StreamName,
  UseCases,
  isWidgetType,
  type Widget,
  type WidgetType,
  widgetTypes
} from "@dashstream/core"
import { runLockedPass } from "@dashstream/decimation"
import { Cause, Clock, Console, Effect, Either, Option, Schema } from "effect"
import {
  type CommandName,
  type CommandSpec,
  commandList,
  commandName,
  commandSpecs,
  commandUsage,
  commonOptions,
  type Options,
  quickAnswer,
  usage,
  usageLine
} from "./Commands.js"
import * as AlertCommands from "./AlertCommands.js"
import * as Config from "./Config.js"
import * as DashboardCommands from "./DashboardCommands.js"
import * as RotationCommands from "./RotationCommands.js"
import * as StreamCommands from "./StreamCommands.js"
import * as ViewCommands from "./ViewCommands.js"
import * as Decimation from "./Decimation.js"
import { CommandFailed, ExitCode, UsageError } from "./Errors.js"
import { errorMessage } from "./internal/errorMessage.js"
import * as Logging from "./Logging.js"
import * as Storage from "./Storage.js"

/**
 * The `dashstream` command line (docs/api.md section 8). Arguments are split with node's `util.parseArgs` and checked
 * against the command's flags: an unknown flag, a missing value or a stray argument is a usage error. Every command
 * takes `--db`. The commands' names, flags and help text are in `Commands.ts`; this module gives each its run.
 */

/** Flag values as `parseArgs` returns them: strings for string options, booleans for boolean options. */
type Values = Config.Flags

/** What a command gets besides its flags. */
interface Context {
  readonly env: Config.Env
  readonly db: Config.DatabaseConfig
}

/** Does the work of a command once the flags are parsed and the required ones checked; writes its output to stdout. */
type Run = (values: Values, context: Context) => Effect.Effect<void, UsageError | CommandFailed>

/** One command: its help text and flags ({@link commandSpecs}) and its {@link Run}. */
interface Command extends CommandSpec {
  readonly run: Run
}

const string = (values: Values, name: string): string | undefined => {
  const value = values[name]
  return typeof value === "string" ? value : undefined
}

/** The values of a repeatable flag, in order (none: `[]`). */
const strings = (values: Values, name: string): ReadonlyArray<string> => {
  const value = values[name]
  return typeof value === "string" ? [value] : Array.isArray(value) ? value : []
}

/** The account of `--access-key`; an unknown or revoked key is a runtime failure (exit 1), not a usage error. */
const accountOf = (accessKey: string) =>
  UseCases.authenticate(accessKey).pipe(
    Effect.catchTag("Forbidden", () =>
      Effect.fail(new CommandFailed({ message: "the access key is unknown or has been revoked" }))
    )
  )

const decodeStreamName = Schema.decodeUnknownEither(StreamName)

const parseType = (value: string): Either.Either<WidgetType, UsageError> =>
  isWidgetType(value)
    ? Either.right(value)
    : Either.left(
        new UsageError({
          message: `--type must be one of the ${widgetTypes.length} widget types: ${widgetTypes.join(", ")} (got ${JSON.stringify(value)})`
        })
      )

const widgetJson = (widget: Widget) => ({
  streamName: widget.streamName,
  type: widget.type,
  createdAt: new Date(Math.floor(widget.createdAt / 1000)).toISOString()
})

/** What each command does once its flags are parsed and the required ones checked; writes its output to stdout. */
const runs: { readonly [N in CommandName]: Run } = {
  serve: (values, { db, env }) =>
    Effect.flatMap(Config.serveConfig(values as Config.ServeFlags, env), (config) =>
      // Loaded on demand: the other commands start faster without the HTTP stack. Above one worker this process is
      // the primary of a `node:cluster` server, or one of its workers, each of which runs `Serve.serve`.
      config.workers > 1
        ? Effect.flatMap(
            Effect.promise(() => import("./Workers.js")),
            (Workers) => Workers.run(db, config)
          )
        : Effect.flatMap(
            Effect.promise(() => import("./Serve.js")),
            (Serve) => Serve.run(db, config)
          )
    ),
  decimate: (values, { db, env }) =>
    Effect.gen(function* () {
      const flag = string(values, "now")
      const now = flag === undefined ? (yield* Clock.currentTimeMillis) * 1000 : yield* Config.parseNow(flag)
      const policy = yield* Config.decimationPolicy(string(values, "decimation-tiers"), env)
      const outcome = yield* runLockedPass({ policy, now }).pipe(withStorage(db))
      if (Option.isNone(outcome)) {
        return yield* new CommandFailed({
          message: "another decimation pass is running on this database; run decimate again once it has finished"
        })
      }
      yield* Console.log(Decimation.summary(outcome.value))
    }),
  migrate: (_, { db }) =>
    Effect.flatMap(Storage.migrate(db.database), (applied) =>
      Console.log(
        applied.length === 0
          ? `The schema of the ${Storage.describe(db.database)} is up to date.`
          : `Applied ${applied.join(", ")}: the schema of the ${Storage.describe(db.database)} is up to date.`
      )
    ),
  "accounts create": (values, { db }) =>
    Effect.gen(function* () {
      const account = yield* UseCases.createAccount(string(values, "name") ?? "").pipe(
        Effect.catchTag("InvalidRequest", (error) => new UsageError({ message: `--name: ${error.message}` }))
      )
      if (values.json === true) {
        yield* Console.log(JSON.stringify({ id: account.id, name: account.name, accessKey: account.accessKey }))
      } else {
        const named = account.name === "" ? "" : ` ${JSON.stringify(account.name)}`
        yield* Console.log(`Created account${named} with id ${account.id}.`)
        yield* Console.log(`Access key (shown only now; store it as a secret):`)
        yield* Console.log(account.accessKey)
      }
    }).pipe(withStorage(db)),
  "widgets create": (values, { db }) =>
    Effect.gen(function* () {
      const type = yield* parseType(string(values, "type")!)
      const stream = string(values, "stream")!
      if (Either.isLeft(decodeStreamName(stream))) {
        return yield* new UsageError({
          message: `--stream must be 1 to 255 characters with no control characters and no "/"`
        })
      }
      yield* Effect.gen(function* () {
        const accountId = yield* accountOf(string(values, "access-key")!)
        const widget = yield* UseCases.createWidget(accountId, stream, type).pipe(
          Effect.catchTags({
            Conflict: () =>
              new CommandFailed({
                message: `the account already has a widget with stream name ${JSON.stringify(stream)}`
              }),
            AccountNotFound: (error) => new CommandFailed({ message: error.message }),
            InvalidRequest: (error) => new UsageError({ message: error.message })
          })
        )
        yield* Console.log(`Created ${widget.type} widget ${JSON.stringify(widget.streamName)}.`)
      }).pipe(withStorage(db))
    }),
  "widgets list": (values, { db }) =>
    Effect.gen(function* () {
      const accountId = yield* accountOf(string(values, "access-key")!)
      const widgets = yield* UseCases.listWidgets(accountId).pipe(
        Effect.catchTag("AccountNotFound", (error) => new CommandFailed({ message: error.message }))
      )
      if (values.json === true) {
        yield* Console.log(JSON.stringify({ widgets: widgets.map(widgetJson) }))
      } else if (widgets.length === 0) {
        yield* Console.log("The account has no widgets yet.")
      } else {
        const rows = [["STREAM", "TYPE", "CREATED"], ...widgets.map((w) => Object.values(widgetJson(w)))]
        const widths = [0, 1].map((i) => Math.max(...rows.map((row) => row[i]!.length)))
        for (const row of rows) {
          yield* Console.log(`${row[0]!.padEnd(widths[0]!)}  ${row[1]!.padEnd(widths[1]!)}  ${row[2]}`)
        }
      }
    }).pipe(withStorage(db)),
  "streams read": (values, { db }) =>
    Effect.flatMap(
      StreamCommands.parseReadFlags({
        from: string(values, "from"),
        to: string(values, "to"),
        since: string(values, "since"),
        points: string(values, "points"),
        limit: string(values, "limit")
      }),
      (params) =>
        StreamCommands.read(
          string(values, "access-key")!,
          string(values, "stream")!,
          params,
          values.json === true
        ).pipe(withStorage(db))
    ),
  "dashboards create": (values, { db, env }) =>
    Effect.gen(function* () {
      const name = yield* DashboardCommands.parseName(string(values, "name")!)
      const prefix = yield* linkPrefix(values, env)
      const file = string(values, "layout")
      const layout = file === undefined ? undefined : { file, tiles: yield* DashboardCommands.readLayout(file) }
      yield* Effect.flatMap(accountOf(string(values, "access-key")!), (accountId) =>
        DashboardCommands.create(accountId, name, layout, values.json === true, prefix)
      ).pipe(withStorage(db))
    }),
  "dashboards list": (values, { db, env }) =>
    withLinks(values, env, db, (accountId, json, prefix) =>
      ViewCommands.list(DashboardCommands.views, accountId, json, prefix)
    ),
  "dashboards rotate-token": (values, { db, env }) =>
    withLinks(values, env, db, (accountId, json, prefix) =>
      ViewCommands.rotateToken(DashboardCommands.views, accountId, string(values, "id")!, json, prefix)
    ),
  "rotations create": (values, { db, env }) =>
    Effect.gen(function* () {
      const body = yield* RotationCommands.parseBody(
        string(values, "name")!,
        string(values, "dashboards"),
        string(values, "interval")!
      )
      yield* withLinks(values, env, db, (accountId, json, prefix) =>
        RotationCommands.create(accountId, body, json, prefix)
      )
    }),
  "rotations list": (values, { db, env }) =>
    withLinks(values, env, db, (accountId, json, prefix) =>
      ViewCommands.list(RotationCommands.views, accountId, json, prefix)
    ),
  "rotations show": (values, { db, env }) =>
    withLinks(values, env, db, (accountId, json, prefix) =>
      RotationCommands.show(accountId, string(values, "id")!, json, prefix)
    ),
  "rotations delete": (values, { db }) =>
    Effect.flatMap(accountOf(string(values, "access-key")!), (accountId) =>
      RotationCommands.remove(accountId, string(values, "id")!)
    ).pipe(withStorage(db)),
  "rotations rotate-token": (values, { db, env }) =>
    withLinks(values, env, db, (accountId, json, prefix) =>
      ViewCommands.rotateToken(RotationCommands.views, accountId, string(values, "id")!, json, prefix)
    ),
  "alerts rules create": (values, { db }) =>
    withAccount(values, db, (accountId) =>
      AlertCommands.createRule(
        accountId,
        {
          name: string(values, "name")!,
          stream: string(values, "stream")!,
          above: string(values, "above"),
          below: string(values, "below"),
          noDataFor: string(values, "no-data-for"),
          for: string(values, "for"),
          receivers: strings(values, "receiver")
        },
        values.json === true
      )
    ),
  "alerts rules list": (values, { db }) =>
    withAccount(values, db, (accountId) => AlertCommands.listRules(accountId, values.json === true)),
  "alerts rules delete": (values, { db }) =>
    withAccount(values, db, (accountId) => AlertCommands.deleteRule(accountId, string(values, "id")!)),
  "alerts receivers create": (values, { db }) =>
    withAccount(values, db, (accountId) =>
      AlertCommands.createReceiver(
        accountId,
        {
          name: string(values, "name")!,
          kind: string(values, "kind")!,
          url: string(values, "url")!,
          secret: string(values, "secret")
        },
        values.json === true
      )
    ),
  "alerts receivers list": (values, { db }) =>
    withAccount(values, db, (accountId) => AlertCommands.listReceivers(accountId, values.json === true)),
  "alerts receivers delete": (values, { db }) =>
    withAccount(values, db, (accountId) => AlertCommands.deleteReceiver(accountId, string(values, "id")!)),
  "alerts receivers test": (values, { db }) =>
    withAccount(values, db, (accountId) =>
      AlertCommands.testReceiver(accountId, string(values, "id")!, values.json === true)
    ),
  copy: (values) =>
    Effect.flatMap(
      Effect.promise(() => import("./Copy.js")),
      (Copy) => Copy.run(string(values, "from")!, string(values, "to")!)
    )
}

/** The commands, in the order `help` lists them: each spec of {@link commandSpecs} with its run. */
const commands: ReadonlyArray<Command> = (Object.keys(commandSpecs) as Array<CommandName>).map((name) => ({
  ...commandSpecs[name],
  run: runs[name]
}))

/** Runs a use case against the configured database; storage failures become {@link CommandFailed}. */
const withStorage =
  (db: Config.DatabaseConfig) =>
  <A, E, R>(
    effect: Effect.Effect<A, E, R>
  ): Effect.Effect<A, Exclude<E, StorageFailure> | CommandFailed | UsageError, Exclude<R, Storage.Ports>> =>
    effect.pipe(
      Effect.mapError((error): Exclude<E, StorageFailure> | CommandFailed =>
        isStorageFailure(error) ? Storage.failure(db.database, error) : (error as Exclude<E, StorageFailure>)
      ),
      Effect.provide(Storage.layer(db.database))
    )

/** What the view URLs a command prints start with: `--base-url`, else the base path (`ViewCommands.viewLinkPrefix`). */
const linkPrefix = (values: Values, env: Config.Env) =>
  ViewCommands.viewLinkPrefix(string(values, "base-url"), string(values, "base-path"), env)

/**
 * Runs a command that prints view URLs: checks what they start with (before the database is opened), then runs `body`
 * with the account of `--access-key`, `--json` and that prefix against the configured database.
 */
const withLinks = <E>(
  values: Values,
  env: Config.Env,
  db: Config.DatabaseConfig,
  body: (accountId: AccountId, json: boolean, prefix: string) => Effect.Effect<void, E, AccountStore | DashboardStore>
): Effect.Effect<void, Exclude<E, StorageFailure> | CommandFailed | UsageError> =>
  Effect.flatMap(linkPrefix(values, env), (prefix) =>
    Effect.flatMap(accountOf(string(values, "access-key")!), (accountId) =>
      body(accountId, values.json === true, prefix)
    ).pipe(withStorage(db))
  )

/** Runs `body` with the account of `--access-key` against the configured database. */
const withAccount = <E, R extends Storage.Ports>(
  values: Values,
  db: Config.DatabaseConfig,
  body: (accountId: AccountId) => Effect.Effect<void, E, R>
) => Effect.flatMap(accountOf(string(values, "access-key")!), body).pipe(withStorage(db))

const isStorageFailure = (error: unknown): error is StorageFailure =>
  error instanceof StorageError || error instanceof StorageUnavailable

/** The most words a command name has (`alerts rules create`). */
const maxWords = Math.max(...Object.values(commandSpecs).map((spec) => spec.words.length))

/** Finds the command named by the leading words of `argv`; the rest are its flags. */
const findCommand = (argv: ReadonlyArray<string>): Either.Either<[Command, Array<string>], UsageError> => {
  const words: Array<string> = []
  for (const arg of argv) {
    if (arg.startsWith("-") || words.length === maxWords) break
    words.push(arg)
  }
  for (let n = words.length; n > 0; n--) {
    const command = commands.find((c) => c.words.join(" ") === words.slice(0, n).join(" "))
    if (command !== undefined) return Either.right([command, argv.slice(n)])
  }
  // The longest run of leading words that starts some commands (`alerts rules`): they are what was meant.
  for (let n = words.length; n > 0; n--) {
    const prefix = words.slice(0, n)
    const group = commands.filter((c) => c.words.length > n && prefix.every((word, i) => c.words[i] === word))
    if (group.length === 0) continue
    const got =
      words.length > n
        ? `unknown command "${words.slice(0, n + 1).join(" ")}"`
        : `"${prefix.join(" ")}" needs a subcommand`
    return Either.left(new UsageError({ message: `${got}; use ${group.map(commandName).join(" or ")}` }))
  }
  return Either.left(
    new UsageError({
      message:
        words.length === 0
          ? `missing command; the commands are ${commandList()}`
          : `unknown command "${words[0]}"; the commands are ${commandList()}`
    })
  )
}

/**
 * Reads a command's flags. `util.parseArgs` splits `args` into tokens: a string flag takes the next argument as its
 * value even when it starts with "-" (access keys made before the `ds_` prefix may), and `--flag=value` works too.
 * It runs non-strict, and the tokens are checked here against the command's flags, so that each problem is one
 * sentence naming the flag (strict mode would refuse a value starting with "-" and report in node's own words).
 */
const parseFlags = (command: Command, args: ReadonlyArray<string>): Either.Either<Values, UsageError> => {
  const options: Options = { ...command.options, ...commonOptions }
  const { values, tokens } = parseArgs({
    args: [...args],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true
  })
  const name = commandName(command)
  // A value that is one of the command's own flags means the value was left out: `--db --name x`.
  const isFlag = (arg: string) =>
    arg === "--" ||
    (arg.startsWith("--")
      ? Object.hasOwn(options, arg.slice(2).split("=")[0]!)
      : Object.values(options).some((option) => option.short !== undefined && arg === `-${option.short}`))
  const fail = (message: string) => Either.left(new UsageError({ message }))
  for (const token of tokens) {
    if (token.kind === "positional") {
      return fail(`unexpected argument ${JSON.stringify(token.value)} for ${name}; usage: ${usageLine(command)}`)
    }
    if (token.kind === "option-terminator") continue
    const option = Object.hasOwn(options, token.name) ? options[token.name]! : undefined
    if (option === undefined) {
      const known = Object.keys(options)
        .map((flag) => `--${flag}`)
        .join(", ")
      return fail(`unknown flag ${token.rawName} for ${name}; its flags are ${known}`)
    }
    if (option.type === "boolean" && token.value !== undefined) return fail(`${token.rawName} takes no value`)
    if (option.type === "string" && (token.value === undefined || (!token.inlineValue && isFlag(token.value)))) {
      return fail(`${token.rawName} needs a value (to pass a value starting with "-", write ${token.rawName}=VALUE)`)
    }
  }
  return Either.right(values)
}

/** Picks, parses and runs the command of `argv`; fails with the usage or runtime error to report. */
const dispatch = (argv: ReadonlyArray<string>, env: Config.Env): Effect.Effect<void, UsageError | CommandFailed> =>
  Effect.gen(function* () {
    const quick = quickAnswer(argv)
    if (quick !== undefined) return yield* Console.log(quick)
    const [first] = argv
    if (first === "help" || first === "--help" || first === "-h") {
      const topic = argv.slice(1).filter((arg) => !arg.startsWith("-"))
      const [command] = yield* findCommand(topic)
      return yield* Console.log(commandUsage(command))
    }
    const found = findCommand(argv)
    if (Either.isLeft(found) && argv.some((arg) => arg === "--help" || arg === "-h")) return yield* Console.log(usage())
    const [command, args] = yield* found
    const values = yield* parseFlags(command, args)
    if (values.help === true) return yield* Console.log(commandUsage(command))
    const missing = (command.required ?? []).filter((name) => typeof values[name] !== "string")
    if (missing.length > 0) {
      return yield* new UsageError({
        message: `${commandName(command)} needs ${missing.map((name) => `--${name}`).join(", ")}; usage: ${usageLine(command)}`
      })
    }
    const db = yield* Config.databaseConfig(string(values, "db"), env)
    yield* command.run(values, { env, db })
  })

/**
 * Runs `dashstream` with `argv` (the arguments after the script name) and `env`, and returns the exit code
 * (docs/api.md section 8): 0 success, 1 runtime failure, 2 usage error. Errors are written to stderr as one line
 * `dashstream: <sentence>`; with `DASHSTREAM_DEBUG=1` the cause and stack trace follow. Never fails: an
 * unexpected defect is reported as a runtime failure. Interruption (SIGINT/SIGTERM under `runMain`) is not caught,
 * so `serve` unwinds its scopes and the process exits 0.
 */
export const run = (argv: ReadonlyArray<string>, env: Config.Env): Effect.Effect<number> => {
  const debug = Config.debug(env)
  const report = (message: string, detail: unknown, code: number) =>
    Effect.as(
      Effect.zipRight(
        Console.error(`dashstream: ${message}`),
        debug && detail !== undefined ? Console.error(detail) : Effect.void
      ),
      code
    )
  const program = Either.match(Config.logLevel(env), {
    onLeft: (error) => Effect.fail(error),
    onRight: (level) => dispatch(argv, env).pipe(Effect.provide(Logging.layer(level)))
  })
  return program.pipe(
    Effect.as(ExitCode.success as number),
    Effect.catchTags({
      UsageError: (error) => report(error.message, undefined, ExitCode.usage),
      CommandFailed: (error) => report(error.message, error.cause, ExitCode.failure)
    }),
    Effect.catchAllCause((cause) =>
      // Interrupted (SIGINT/SIGTERM): interrupted again, not reported, so `runMain` exits 0.
      Cause.isInterruptedOnly(cause)
        ? Effect.interrupt
        : report(`unexpected error: ${errorMessage(Cause.squash(cause))}`, Cause.pretty(cause), ExitCode.failure)
    )
  )
}
