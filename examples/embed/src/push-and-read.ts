/**
 * Dashstream's core embedded in a Node program, with SQLite storage and no HTTP server: create an account and a
 * widget, push points, read them back, as the push and export API would (docs/api.md sections 4 to 6).
 *
 * Usage: node dist/push-and-read.js [database file]   (default: embedded.db in the current directory)
 */
import { defaultLimits, UseCases } from "@dashstream/core"
import * as Sqlite from "@dashstream/storage-sqlite"
import { Effect } from "effect"

const filename = process.argv[2] ?? "embedded.db"

const program = Effect.gen(function* () {
  // An account and its access key (shown once; only its digest is stored), and a sparkline widget.
  const account = yield* UseCases.createAccount("embedded")
  yield* UseCases.createWidget(account.id, "temperature", "sparkline")

  // A push takes the same JSON body as POST /customSend: here two timestamped points (seconds), then one stamped now.
  const push = (point: unknown) =>
    UseCases.push({ accessKey: account.accessKey, streamName: "temperature", point }, defaultLimits)
  yield* push([
    { number: 21.5, timestamp: 1700000000 },
    { number: 22, timestamp: 1700000060 }
  ])
  yield* push({ number: 22.5 })

  // A read takes the export API's query: since=0 is every entry, oldest first. `ts` is in microseconds.
  const entries = yield* UseCases.read(account.accessKey, "temperature", { since: "0" })
  for (const entry of entries) console.log(JSON.stringify({ ts: entry.ts / 1e6, point: JSON.parse(entry.json) }))

  // The latest entry only, as GET /api/v2/<key>/datastream/temperature answers without since.
  const [latest] = yield* UseCases.read(account.accessKey, "temperature", {})
  console.log(`latest: ${latest?.json}`)
})

// The SQLite layer provides every storage port the use cases ask for; the file is migrated on open and closed at the end.
await Effect.runPromise(program.pipe(Effect.provide(Sqlite.layer({ filename }))))
