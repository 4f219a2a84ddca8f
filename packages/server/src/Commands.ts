import type { ParseArgsConfig } from "node:util"
import { environmentHelp, serveOptions, serveSynopsis } from "./ServeFlags.js"
import { version } from "./Version.js"

/**
 * The table of `dashstream` commands (docs/api.md section 8) as data: names, flags and help text, and the text of
 * `help` and `version`. `Cli.ts` gives each command its `run`. This module imports nothing but node (no effect, no
 * storage, no HTTP), so `bin.ts` answers `help` and `version` without loading the rest (startup time, see
 * bench/startup).
 */

/** The flags a command accepts, in `util.parseArgs` form. */
export type Options = NonNullable<ParseArgsConfig["options"]>

/** The help text and flags of one command. */
export interface CommandSpec {
  /** The words that select the command: `["widgets", "create"]`. */
  readonly words: ReadonlyArray<string>
  /** The flags after the words, as shown in the usage text: `--access-key K --stream S --type T`. */
  readonly synopsis: string
  /** One line for the command list. */
  readonly summary: string
  /** The command's own flags (`--db` and `--help` are added to every command, see {@link commonOptions}). */
  readonly options: Options
  /** Flags that must be given. */
  readonly required?: ReadonlyArray<string>
}

/**
 * The flags of every command that prints view URLs (docs/api.md section 8): `--json`, and what the URLs start with
 * (`--base-url`, else `--base-path`, see `ViewCommands.viewLinkPrefix`).
 */
const viewLinkOptions: Options = {
  json: { type: "boolean" },
  "base-path": { type: "string" },
  "base-url": { type: "string" }
}
const viewLinkSynopsis = "[--json] [--base-url URL | --base-path /PREFIX]"
const viewLinkHelp =
  "--base-url URL: the server's address as people open it, so full URLs are printed (else paths starting with " +
  "--base-path or DASHSTREAM_BASE_PATH, the server's)"

/** The flags every command takes. */
export const commonOptions: Options = {
  db: { type: "string" },
  help: { type: "boolean", short: "h" }
}

/**
 * Every command, by its name (its words joined by a space), in the order `help` lists them. Adding a command (for
 * example `decimate`) is one entry here and its `run` in `Cli.ts` (the compiler asks for it).
 */
export const commandSpecs = {
  serve: {
    words: ["serve"],
    synopsis: serveSynopsis,
    summary:
      "run the HTTP server (migrates the schema first) and the daily decimation pass (default 03:00 UTC); " +
      "--workers N serves with N processes (default 1); --cors-origin (repeatable) lets web pages of " +
      "that origin push and read; on a loopback address without DASHSTREAM_ADMIN_TOKEN it prints a console link " +
      "with a token made for the run (--no-admin: no admin API, no console); behind a reverse proxy, --base-path " +
      "/PREFIX serves every route under /PREFIX (other paths answer 404) and --trust-proxy 127.0.0.1 believes " +
      "X-Forwarded-For and X-Forwarded-Proto from those peers only (off by default); --request-timeout bounds the " +
      "time to receive a request (default 30 s, then 408); stops cleanly on SIGINT or SIGTERM",
    options: serveOptions
  },
  decimate: {
    words: ["decimate"],
    synopsis: "[--now <ISO time>] [--decimation-tiers 5m:48h,1h:14d,1d:90d]",
    summary:
      "run the decimation pass once, as of --now (default: the current time), and print what it removed " +
      "(streams visited N, entries examined N, entries removed N)",
    options: { now: { type: "string" }, "decimation-tiers": { type: "string" } }
  },
  migrate: {
    words: ["migrate"],
    synopsis: "",
    summary: "bring the database schema up to date",
    options: {}
  },
  "accounts create": {
    words: ["accounts", "create"],
    synopsis: "[--name N] [--json]",
    summary: 'create an account and print its access key (--json: {"id","name","accessKey"})',
    options: { name: { type: "string" }, json: { type: "boolean" } }
  },
  "widgets create": {
    words: ["widgets", "create"],
    synopsis: "--access-key K --stream S --type T",
    summary: "declare a widget: a stream of the account and its widget type (a wrong --type lists the types)",
    options: { "access-key": { type: "string" }, stream: { type: "string" }, type: { type: "string" } },
    required: ["access-key", "stream", "type"]
  },
  "widgets list": {
    words: ["widgets", "list"],
    synopsis: "--access-key K [--json]",
    summary: 'list the account\'s widgets (--json: {"widgets":[{"streamName","type","createdAt"}]})',
    options: { "access-key": { type: "string" }, json: { type: "boolean" } },
    required: ["access-key"]
  },
  "streams read": {
    words: ["streams", "read"],
    synopsis: "--access-key K --stream S [--from T] [--to T] [--points N] [--since T] [--limit N] [--json]",
    summary:
      "print a stream's entries, ascending: with --from/--to (inclusive; UNIX seconds or ISO 8601 times) a time " +
      "window, with --points N (2 to 10000) reduced to N buckets as decimation keeps them, --since T after T, " +
      "--limit N at most N; without bounds every entry; one line per entry, its time and point " +
      '(--json: {"data":[{"ts","point"}]}, as the HTTP read answers)',
    options: {
      "access-key": { type: "string" },
      stream: { type: "string" },
      from: { type: "string" },
      to: { type: "string" },
      points: { type: "string" },
      since: { type: "string" },
      limit: { type: "string" },
      json: { type: "boolean" }
    },
    required: ["access-key", "stream"]
  },
  "dashboards create": {
    words: ["dashboards", "create"],
    synopsis: `--access-key K --name N [--layout FILE] ${viewLinkSynopsis}`,
    summary:
      "create a dashboard and print its view URL /d/<token> (--json: the dashboard); --layout FILE: its " +
      `tiles as JSON, [{"streamName","title"?,"x","y","w","h"}] (default: one tile per widget); ${viewLinkHelp}`,
    options: {
      "access-key": { type: "string" },
      name: { type: "string" },
      layout: { type: "string" },
      ...viewLinkOptions
    },
    required: ["access-key", "name"]
  },
  "dashboards list": {
    words: ["dashboards", "list"],
    synopsis: `--access-key K ${viewLinkSynopsis}`,
    summary: `list the account's dashboards with their view URLs (--json: {"dashboards":[...]}, as the admin API answers); ${viewLinkHelp}`,
    options: { "access-key": { type: "string" }, ...viewLinkOptions },
    required: ["access-key"]
  },
  "dashboards rotate-token": {
    words: ["dashboards", "rotate-token"],
    synopsis: `--access-key K --id DASHBOARD ${viewLinkSynopsis}`,
    summary: `give a dashboard a new view token and print its new view URL; the old one stops working; ${viewLinkHelp}`,
    options: { "access-key": { type: "string" }, id: { type: "string" }, ...viewLinkOptions },
    required: ["access-key", "id"]
  },
  "rotations create": {
    words: ["rotations", "create"],
    synopsis: `--access-key K --name N [--dashboards ID,ID...] --interval SECONDS ${viewLinkSynopsis}`,
    summary:
      "create a rotation: the account's dashboards (ids, comma-separated, in order) shown in turn on one screen, " +
      `each for --interval seconds (5 to 3600); prints its view URL /r/<token> (--json: the rotation); ${viewLinkHelp}`,
    options: {
      "access-key": { type: "string" },
      name: { type: "string" },
      dashboards: { type: "string" },
      interval: { type: "string" },
      ...viewLinkOptions
    },
    required: ["access-key", "name", "interval"]
  },
  "rotations list": {
    words: ["rotations", "list"],
    synopsis: `--access-key K ${viewLinkSynopsis}`,
    summary: `list the account's rotations with their view URLs (--json: {"rotations":[...]}, as the admin API answers); ${viewLinkHelp}`,
    options: { "access-key": { type: "string" }, ...viewLinkOptions },
    required: ["access-key"]
  },
  "rotations show": {
    words: ["rotations", "show"],
    synopsis: `--access-key K --id ROTATION ${viewLinkSynopsis}`,
    summary: `show a rotation: its dashboards in order, its interval and its view URL (--json: as the admin API answers); ${viewLinkHelp}`,
    options: { "access-key": { type: "string" }, id: { type: "string" }, ...viewLinkOptions },
    required: ["access-key", "id"]
  },
  "rotations delete": {
    words: ["rotations", "delete"],
    synopsis: "--access-key K --id ROTATION",
    summary: "delete a rotation; its view URL stops working",
    options: { "access-key": { type: "string" }, id: { type: "string" } },
    required: ["access-key", "id"]
  },
  "rotations rotate-token": {
    words: ["rotations", "rotate-token"],
    synopsis: `--access-key K --id ROTATION ${viewLinkSynopsis}`,
    summary: `give a rotation a new view token and print its new view URL; the old one stops working; ${viewLinkHelp}`,
    options: { "access-key": { type: "string" }, id: { type: "string" }, ...viewLinkOptions },
    required: ["access-key", "id"]
  },
  "alerts rules create": {
    words: ["alerts", "rules", "create"],
    synopsis:
      "--access-key K --name N --stream S (--above N | --below N | --no-data-for SECONDS) [--for SECONDS] " +
      "[--receiver ID]... [--json]",
    summary:
      "create an alert rule on a widget's stream (docs/api.md section 18): --above/--below on numeric widgets, " +
      "--no-data-for (10 to 31536000 s) on any; --for: seconds the condition must hold (default 0); --receiver " +
      "(repeatable): the receivers it notifies (--json: the rule)",
    options: {
      "access-key": { type: "string" },
      name: { type: "string" },
      stream: { type: "string" },
      above: { type: "string" },
      below: { type: "string" },
      "no-data-for": { type: "string" },
      for: { type: "string" },
      receiver: { type: "string", multiple: true },
      json: { type: "boolean" }
    },
    required: ["access-key", "name", "stream"]
  },
  "alerts rules list": {
    words: ["alerts", "rules", "list"],
    synopsis: "--access-key K [--json]",
    summary: 'list the account\'s alert rules with their state (--json: {"rules":[...]}, as the admin API answers)',
    options: { "access-key": { type: "string" }, json: { type: "boolean" } },
    required: ["access-key"]
  },
  "alerts rules delete": {
    words: ["alerts", "rules", "delete"],
    synopsis: "--access-key K --id RULE",
    summary: "delete an alert rule; its transitions stay in the history",
    options: { "access-key": { type: "string" }, id: { type: "string" } },
    required: ["access-key", "id"]
  },
  "alerts receivers create": {
    words: ["alerts", "receivers", "create"],
    synopsis: "--access-key K --name N --kind webhook|slack|alertmanager --url URL [--secret S] [--json]",
    summary:
      "create a receiver of alert notifications: a webhook (signed with --secret), a Slack incoming webhook or a " +
      "Prometheus Alertmanager's base URL (--json: the receiver; its secret is never shown)",
    options: {
      "access-key": { type: "string" },
      name: { type: "string" },
      kind: { type: "string" },
      url: { type: "string" },
      secret: { type: "string" },
      json: { type: "boolean" }
    },
    required: ["access-key", "name", "kind", "url"]
  },
  "alerts receivers list": {
    words: ["alerts", "receivers", "list"],
    synopsis: "--access-key K [--json]",
    summary: 'list the account\'s receivers (--json: {"receivers":[...]}, as the admin API answers)',
    options: { "access-key": { type: "string" }, json: { type: "boolean" } },
    required: ["access-key"]
  },
  "alerts receivers delete": {
    words: ["alerts", "receivers", "delete"],
    synopsis: "--access-key K --id RECEIVER",
    summary: "delete a receiver; its id leaves every rule that notified it",
    options: { "access-key": { type: "string" }, id: { type: "string" } },
    required: ["access-key", "id"]
  },
  "alerts receivers test": {
    words: ["alerts", "receivers", "test"],
    synopsis: "--access-key K --id RECEIVER [--json]",
    summary:
      'send a receiver one test notification of its kind and print its HTTP status (--json: {"status"}); no ' +
      "answer is a runtime failure with the reason",
    options: { "access-key": { type: "string" }, id: { type: "string" }, json: { type: "boolean" } },
    required: ["access-key", "id"]
  },
  copy: {
    words: ["copy"],
    synopsis: "--from <db url> --to <db url>",
    summary:
      "copy every account, access key, widget, dashboard, rotation and entry into an empty database (SQLite to PostgreSQL, or a " +
      "backup from a running deployment), then check the counts; progress on stderr",
    options: { from: { type: "string" }, to: { type: "string" } },
    required: ["from", "to"]
  }
} as const satisfies Readonly<Record<string, CommandSpec>>

/** The name of a command: its words joined by a space (`"widgets create"`). */
export type CommandName = keyof typeof commandSpecs

const specs: ReadonlyArray<CommandSpec> = Object.values(commandSpecs)

/** The name of a command: its words joined by a space. */
export const commandName = (command: CommandSpec): string => command.words.join(" ")

/** One line of usage: `pnpm dashstream widgets create --access-key K --stream S --type T [--db URL]`. */
export const usageLine = (command: CommandSpec): string =>
  `pnpm dashstream ${commandName(command)}${command.synopsis === "" ? "" : ` ${command.synopsis}`} [--db URL]`

/** The text of `dashstream help`. */
export const usage = (): string => {
  const width = Math.max(...specs.map((c) => commandName(c).length))
  return [
    "Usage: pnpm dashstream <command> [flags]",
    "",
    "Commands:",
    ...specs.map((c) => `  ${commandName(c).padEnd(width)}  ${c.summary}`),
    `  ${"help".padEnd(width)}  show this text (also: --help, or <command> --help)`,
    `  ${"version".padEnd(width)}  print the version (also: --version)`,
    "",
    "Every command takes --db URL: sqlite:<path> (default sqlite:./data/dashstream.db) or postgres://user:password@host:port/database.",
    "",
    "Environment:",
    ...environmentHelp(),
    "",
    "Exit codes: 0 success, 1 runtime failure, 2 usage error.",
    "",
    "Usage of each command:",
    ...specs.map((c) => `  ${usageLine(c)}`)
  ].join("\n")
}

/** The text of `dashstream <command> --help`. */
export const commandUsage = (command: CommandSpec): string => `Usage: ${usageLine(command)}\n\n${command.summary}\n`

/** The commands as a list for error messages: `serve, decimate, ..., help`. */
export const commandList = (): string => [...specs.map(commandName), "help"].join(", ")

/**
 * What `dashstream <argv>` prints when it only asks for the version (`version` or `--version` first) or the whole
 * usage text (`help`, `--help` or `-h` first, and no command name after it), else `undefined`: the command needs the
 * full CLI. Both `bin.ts` (before it loads anything else) and `Cli.ts` ask this first, so the two answer alike.
 */
export const quickAnswer = (argv: ReadonlyArray<string>): string | undefined => {
  const [first, ...rest] = argv
  if (first === "version" || first === "--version") return version()
  if ((first === "help" || first === "--help" || first === "-h") && rest.every((arg) => arg.startsWith("-"))) {
    return usage()
  }
  return undefined
}
