import * as ChildProcess from "node:child_process"
import { fileURLToPath } from "node:url"
import Database from "better-sqlite3"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { entryRows } from "./fixtures/entryRows.js"
import { T0, tempFiles } from "./fixtures/writer.js"

// Crash safety of the group commit: what a SIGKILLed writer acknowledged is in the file.

const fixture = fileURLToPath(new URL("./fixtures/crashWriter.ts", import.meta.url))
const packageDir = fileURLToPath(new URL("..", import.meta.url))

// Runs the crash writer, SIGKILLs it `killAfterMillis` after it is ready, and returns the lines it printed.
const runAndKill = (filename: string, killAfterMillis: number) =>
  Effect.async<ReadonlyArray<string>, Error>((resume) => {
    const child = ChildProcess.spawn(
      process.execPath,
      ["--conditions=@dashstream/source", "--import", "tsx", fixture, filename],
      {
        cwd: packageDir,
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    let out = ""
    let err = ""
    let killTimer: NodeJS.Timeout | undefined
    const giveUp = setTimeout(() => child.kill("SIGKILL"), 25_000)
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      if (killTimer === undefined && out.includes("\n")) {
        killTimer = setTimeout(() => child.kill("SIGKILL"), killAfterMillis)
      }
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk))
    child.on("close", (code, signal) => {
      clearTimeout(giveUp)
      clearTimeout(killTimer)
      if (signal !== "SIGKILL" || killTimer === undefined) {
        resume(Effect.fail(new Error(`crash writer ended with ${code ?? signal} before the kill: ${err}`)))
      } else {
        // A line cut by the kill has no newline yet: drop it.
        resume(Effect.succeed(out.split("\n").slice(0, -1)))
      }
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

describe("crash safety", () => {
  const freshFile = tempFiles("group")

  it.effect(
    "every write a SIGKILLed process saw acknowledged is in the file when it is opened again",
    () =>
      Effect.gen(function* () {
        const filename = freshFile()
        const lines = yield* runAndKill(filename, 2000)
        const [ready, ...acks] = lines
        const [, seriesId, counterId] = ready!.split(" ").map(Number)
        const puts = acks.filter((l) => l.startsWith("p ")).map((l) => Number(l.slice(2)))
        const deltas = acks.filter((l) => l === "d").length
        assert.isAbove(puts.length, 100, `only ${puts.length} puts acknowledged`)

        // Opening it again recovers the WAL the killed process left behind.
        const db = new Database(filename)
        try {
          const stored = new Map(entryRows(db, seriesId).map((r) => [r.ts - T0, r.point]))
          const missing = puts.filter((i) => stored.get(i) !== JSON.stringify({ number: i }))
          assert.deepStrictEqual(missing, [], `${missing.length} of ${puts.length} acknowledged puts missing`)
          const counter = entryRows(db, counterId).at(-1)?.point
          const total = counter === undefined ? 0 : (JSON.parse(counter) as { number: number }).number
          assert.isAtLeast(total, deltas)
        } finally {
          db.close()
        }
      }),
    40_000
  )
})
