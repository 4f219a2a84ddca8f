import { Layer, Logger, type LogLevel } from "effect"

/**
 * The process's logger: Effect's logfmt format (`timestamp=... level=INFO fiber=#1 message=...`), one line per
 * entry, on stderr so stdout stays for command output (access keys, JSON, the listening line). Entries below
 * `level` are dropped. Nothing in the server logs an access key; the HTTP adapter redacts it from request paths.
 */
export const layer = (level: LogLevel.LogLevel): Layer.Layer<never> =>
  Layer.merge(
    Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger)),
    Logger.minimumLogLevel(level)
  )
