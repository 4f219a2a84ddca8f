import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { cli, postJson, type Server, startServer, stop, tempDir } from "./support.js"

/**
 * Decimation end to end (docs/api.md section 9): a sparkline filled over HTTP with timestamped points spanning 200
 * days, `dashstream decimate --now <fixed time>` run as its own process beside the running server (SQLite in WAL
 * mode lets both use the file), then `since=0` reads over HTTP.
 */

const timeout = 300_000

/** The pass time: 2024-01-10T00:00:00Z, in UNIX seconds. */
const NOW = Date.UTC(2024, 0, 10) / 1000
const NOW_ISO = "2024-01-10T00:00:00Z"
const MINUTE = 60
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
/** The default tiers in seconds, finest first: bucket width and the age its end must reach. */
const TIERS = [
  { width: 5 * MINUTE, age: 48 * HOUR },
  { width: HOUR, age: 14 * DAY },
  { width: DAY, age: 90 * DAY }
] as const
const GLOBAL_MAX = 1_000_000
const GLOBAL_MIN = -1_000_000

interface Entry {
  readonly ts: number
  readonly point: { readonly number: number }
}

/** The coarsest qualifying bucket of `ts` at the pass time, as `tier:start`, or undefined when kept as recent. */
const bucketOf = (ts: number): string | undefined => {
  for (let tier = TIERS.length - 1; tier >= 0; tier--) {
    const { age, width } = TIERS[tier]!
    const start = Math.floor(ts / width) * width
    if (start + width <= NOW - age) return `${tier}:${start}`
  }
  return undefined
}

/**
 * docs/api.md section 9 read literally: in each qualifying bucket keep the first, last, lowest and highest entries
 * (the earliest among equal values); keep every other entry and the newest one.
 */
const expectedSurvivors = (entries: ReadonlyArray<Entry>): Array<Entry> => {
  const buckets = new Map<string, Array<Entry>>()
  for (const e of entries) {
    const bucket = bucketOf(e.ts)
    if (bucket !== undefined) buckets.set(bucket, [...(buckets.get(bucket) ?? []), e])
  }
  const dropped = new Set<Entry>()
  for (const members of buckets.values()) {
    let low = members[0]!
    let high = members[0]!
    for (const e of members) {
      if (e.point.number < low.point.number) low = e
      if (e.point.number > high.point.number) high = e
    }
    const keep = new Set([members[0]!, members[members.length - 1]!, low, high])
    for (const e of members) if (!keep.has(e)) dropped.add(e)
  }
  dropped.delete(entries[entries.length - 1]!)
  return entries.filter((e) => !dropped.has(e))
}

describe("decimation end to end (docs/api.md section 9)", { timeout }, () => {
  const dir = tempDir()
  const db = `sqlite:${join(dir.path, "dashstream.db")}`
  let server: Server
  let accessKey: string

  beforeAll(async () => {
    const account = await cli(["accounts", "create", "--json", "--db", db])
    assert.strictEqual(account.code, 0, account.stderr)
    accessKey = (JSON.parse(account.stdout) as { accessKey: string }).accessKey
    const widget = await cli([
      "widgets",
      "create",
      "--access-key",
      accessKey,
      "--stream",
      "spark",
      "--type",
      "sparkline",
      "--db",
      db
    ])
    assert.strictEqual(widget.code, 0, widget.stderr)
    server = await startServer(["--db", db, "--decimate-at", "off"])
  }, timeout)

  afterAll(async () => {
    if (server !== undefined) await stop(server)
    dir.remove()
  })

  const readAll = async (): Promise<Array<Entry>> => {
    const response = await fetch(`${server.url}/api/v2/${accessKey}/datastream/spark?since=0`)
    assert.strictEqual(response.status, 200)
    return ((await response.json()) as { data: Array<Entry> }).data
  }

  const decimate = async () => {
    const result = await cli(["decimate", "--now", NOW_ISO, "--db", db], { DASHSTREAM_LOG_LEVEL: "warning" })
    assert.strictEqual(result.code, 0, result.stderr)
    const match = /^streams visited (\d+), entries examined (\d+), entries removed (\d+)\n$/.exec(result.stdout)
    assert.isNotNull(match, `stdout: ${result.stdout}`)
    return { visited: Number(match![1]), examined: Number(match![2]), removed: Number(match![3]) }
  }

  it("200 days every 10 minutes: recent 48 h untouched, old data reduced per tier, global max and min kept", async () => {
    // One point every 10 minutes, 7 s past the bucket edges, with a wave, and the global extremes 150 and 120 days
    // back, in the daily tier.
    const points: Array<{ number: number; timestamp: number }> = []
    for (let ts = NOW - 200 * DAY + 7, i = 0; ts < NOW; ts += 10 * MINUTE, i++) {
      points.push({ number: Math.round(1000 * Math.sin(i / 40)) + (i % 11), timestamp: ts })
    }
    const at = (daysBack: number) => points.findIndex((p) => p.timestamp >= NOW - daysBack * DAY)
    points[at(150)]!.number = GLOBAL_MAX
    points[at(120)]!.number = GLOBAL_MIN
    for (let i = 0; i < points.length; i += 5000) {
      const pushed = await postJson(`${server.url}/customSend`, {
        accessKey,
        streamName: "spark",
        point: points.slice(i, i + 5000)
      })
      assert.strictEqual(pushed.status, 200, JSON.stringify(pushed.body))
    }
    const before = await readAll()
    assert.strictEqual(before.length, points.length)

    const first = await decimate()
    const after = await readAll()

    const horizon = NOW - 48 * HOUR
    assert.deepStrictEqual(first, {
      visited: 1,
      examined: before.filter((e) => e.ts < horizon).length,
      removed: before.length - after.length
    })
    assert.isAbove(first.removed, 20_000)
    // The last 48 hours, exactly as they were.
    assert.deepStrictEqual(
      after.filter((e) => e.ts >= horizon),
      before.filter((e) => e.ts >= horizon)
    )
    // Older data: at most 4 entries per bucket of its tier, and exactly the first, last, lowest and highest.
    const perBucket = new Map<string, number>()
    for (const e of after) {
      const bucket = bucketOf(e.ts)
      if (bucket !== undefined) perBucket.set(bucket, (perBucket.get(bucket) ?? 0) + 1)
    }
    assert.isAtMost(Math.max(...perBucket.values()), 4)
    for (const tier of ["0:", "1:", "2:"])
      assert.isTrue(
        [...perBucket.keys()].some((k) => k.startsWith(tier)),
        tier
      )
    assert.deepStrictEqual(after, expectedSurvivors(before))
    // The stream's global max and min, and its newest entry, are still there.
    const numbers = after.map((e) => e.point.number)
    assert.include(numbers, GLOBAL_MAX)
    assert.include(numbers, GLOBAL_MIN)
    assert.deepStrictEqual(after[after.length - 1], before[before.length - 1])

    // A second pass at the same time removes nothing; the server still takes pushes.
    const second = await decimate()
    assert.strictEqual(second.removed, 0)
    assert.deepStrictEqual(await readAll(), after)
    const pushed = await postJson(`${server.url}/customSend`, {
      accessKey,
      streamName: "spark",
      point: { number: 5, timestamp: NOW + 1 }
    })
    assert.strictEqual(pushed.status, 200)
    assert.strictEqual((await readAll()).length, after.length + 1)
  })

  it("decimate: a bad --now is a usage error (exit 2) and touches nothing", async () => {
    const result = await cli(["decimate", "--now", "last tuesday", "--db", db])
    assert.strictEqual(result.code, 2)
    assert.strictEqual(result.stdout, "")
    assert.match(result.stderr, /^dashstream: --now must be an ISO 8601 time/)
  })
})
