import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { alertEngineSuite, alertStoreSuite } from "@dashstream/core/testing"
import { afterAll } from "@effect/vitest"
import { Effect } from "effect"
import * as SqliteStore from "../src/index.js"

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dashstream-sqlite-alerts-"))
afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

let files = 0
const freshFile = () => Path.join(dir, `store-${++files}.db`)

alertStoreSuite("sqlite", () => SqliteStore.layer({ filename: freshFile() }), { sharedByProcesses: false })

// Each "process" opens the one file with a connection of its own.
alertEngineSuite("sqlite", () =>
  Effect.sync(() => {
    const filename = freshFile()
    return () => SqliteStore.layer({ filename })
  })
)
