/**
 * `dashstream serve` with two benchmark hooks; everything else is the real server (`packages/server/src/bin.ts`,
 * loaded last):
 * - `BENCH_MAX_STREAMS_PER_KEY`: the open event streams allowed per access key (docs/api.md section 10: 100), so that
 *   1,000 subscribers can follow one stream. `dashstream serve` has no flag for it, so this sets the live lane's
 *   default before the server is loaded.
 * - `BENCH_MEMORY_FILE`: on SIGUSR2 the process runs a full garbage collection (when node was started with
 *   `--expose-gc`) and then writes `process.memoryUsage()` (bytes) as JSON to that file, so that memory is measured
 *   without the garbage of whatever ran before.
 */
import { writeFileSync } from "node:fs"
import { defaultLiveOptions } from "../../packages/http/src/internal/liveLane.js"

const max = Number(process.env["BENCH_MAX_STREAMS_PER_KEY"] ?? "100")
if (!Number.isInteger(max) || max < 1) throw new Error(`BENCH_MAX_STREAMS_PER_KEY must be a positive integer`)
;(defaultLiveOptions as { maxStreamsPerKey: number }).maxStreamsPerKey = max

const memoryFile = process.env["BENCH_MEMORY_FILE"]
if (memoryFile !== undefined) {
  process.on("SIGUSR2", () => {
    const gc = (globalThis as { gc?: () => void }).gc
    // Twice: what the first collection's finalizers release is collected by the second.
    gc?.()
    gc?.()
    writeFileSync(memoryFile, JSON.stringify({ ...process.memoryUsage(), collected: gc !== undefined }))
  })
}

await import("../../packages/server/src/bin.js")
