import { Data } from "effect"

/**
 * The command line was wrong: unknown command or flag, missing required flag, a value of the wrong form
 * (docs/api.md section 8: exit code 2). `message` is one sentence naming the flag (or environment variable) and the
 * accepted forms; it never contains a secret.
 */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/**
 * A well-formed command that failed while running: unknown access key, database unreachable, port in use
 * (docs/api.md section 8: exit code 1). `message` is one sentence for stderr; `cause`, if any, is shown only with
 * `DASHSTREAM_DEBUG=1`.
 */
export class CommandFailed extends Data.TaggedError("CommandFailed")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/** The process exit codes of docs/api.md section 8. */
export const ExitCode = {
  /** The command did what it was asked (also: `serve` stopped by SIGINT or SIGTERM). */
  success: 0,
  /** A runtime failure ({@link CommandFailed}, or an unexpected defect). */
  failure: 1,
  /** A usage error ({@link UsageError}). */
  usage: 2
} as const
