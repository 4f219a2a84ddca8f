/**
 * docs/api.md section 12: `dashstream copy --from URL --to URL`. A SQLite database filled through the real push path
 * (by a running server, which keeps running during the copy) is copied to a fresh PostgreSQL database and served
 * from there: every read answers the same bytes, and every dashboard's view URL opens the same page. The PostgreSQL
 * copy is then backed up to a new SQLite file, where the same view tokens resolve to the same dashboards. A target
 * that holds accounts is refused, an interrupted copy leaves its target empty, and the count check counts dashboards.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  type AccessKeyRecord,
  type AccountId,
  type AccountRecord,
  AccountStore,
  alertCopyTables,
  AlertStore,
  CopyMismatch,
  copyStore,
  type CopySource,
  type DashboardRecord,
  Dashboards,
  type EntryRecord,
  initialEvaluation,
  micros,
  newAlertRuleId,
  newReceiverId,
  type RotationRecord,
  StorageError,
  type StorageFailure,
  type StoreCopy,
  StreamName,
  type StreamRecord
} from "@dashstream/core"
import * as Postgres from "@dashstream/storage-postgres"
import { openTestDatabase, type TestDatabase } from "@dashstream/storage-postgres/testing"
import * as Sqlite from "@dashstream/storage-sqlite"
import { Effect, Either, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Api, defaultAdminToken, expectSuccess, type RunningServer, runCli, startServer } from "./e2e/harness.js"

interface Dump {
  readonly accounts: ReadonlyArray<AccountRecord>
  readonly accessKeys: ReadonlyArray<AccessKeyRecord>
  readonly streams: ReadonlyArray<StreamRecord>
  readonly dashboards: ReadonlyArray<DashboardRecord>
  readonly rotations: ReadonlyArray<RotationRecord>
  readonly entries: ReadonlyArray<readonly [number, ReadonlyArray<EntryRecord>]>
  /** Each alert table's rows, every value as text (PostgreSQL reads bigint columns as text, SQLite as numbers). */
  readonly alerts: Readonly<Record<string, ReadonlyArray<Record<string, string | null>>>>
}

const all = 1_000_000

/** Everything a store holds, as its own `StoreCopy` reads it. */
const dumpOf = (source: CopySource): Effect.Effect<Dump, StorageFailure> =>
  Effect.gen(function* () {
    const streams = yield* source.streams(null, all)
    const entries: Array<readonly [number, ReadonlyArray<EntryRecord>]> = []
    for (const stream of streams) entries.push([stream.id, yield* source.entries(stream.id, null, all)])
    return {
      accounts: yield* source.accounts(null, all),
      accessKeys: yield* source.accessKeys(null, all),
      streams,
      dashboards: yield* source.dashboards(null, all),
      rotations: yield* source.rotations(null, all),
      entries,
      alerts: Object.fromEntries(
        yield* Effect.forEach(alertCopyTables, ({ table }) =>
          Effect.map(source.alertRows(table, 0, all), (rows) => [
            table,
            rows.map((row) =>
              Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v === null ? null : String(v)]))
            )
          ])
        )
      )
    }
  })

type Url = { readonly sqlite: string } | { readonly postgres: string }

/** Runs `use` with the `StoreCopy` port of a database, opened in this process. */
const withCopy = <A>(url: Url, use: (copy: StoreCopy["Type"]) => Effect.Effect<A, unknown>): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(
        "sqlite" in url
          ? Sqlite.openStoreCopy({ filename: url.sqlite })
          : Postgres.openStoreCopy(Either.getOrThrow(Postgres.parseUrl(url.postgres))),
        use
      )
    ) as Effect.Effect<A>
  )

const dump = (url: Url): Promise<Dump> => withCopy(url, (copy) => copy.read(dumpOf))

const sortedByName = (dump: Dump) => [...dump.accounts].sort((a, b) => a.id.localeCompare(b.id))

/** `dump` with rows in one order whatever the backend's text collation. */
const normalised = (d: Dump) => ({
  ...d,
  accounts: sortedByName(d),
  accessKeys: [...d.accessKeys].sort((a, b) => a.digest.localeCompare(b.digest)),
  dashboards: [...d.dashboards].sort((a, b) => a.id.localeCompare(b.id)),
  rotations: [...d.rotations].sort((a, b) => a.id.localeCompare(b.id))
})

describe("dashstream copy", () => {
  const dir = mkdtempSync(join(tmpdir(), "dashstream-copy-"))
  const sqliteFile = join(dir, "source.db")
  const sqliteUrl = `sqlite:${sqliteFile}`
  let pg: TestDatabase
  let pgFresh: TestDatabase
  let source: RunningServer
  let api: Api
  /** Every stream pushed to, with the access key that reads it. */
  const streams: Array<{ key: string; stream: string }> = []
  let revokedKey = ""
  /** Every dashboard, with its current view token and what the admin API last answered for it. */
  const dashboards: Array<{ viewToken: string; accountId: string; json: Record<string, unknown> }> = []
  /** A dashboard's view token from before its rotation: it opens nothing, on the original or a copy. */
  let rotatedViewToken = ""
  /** A rotation's view token (docs/api.md section 15): it opens the same rotation page on a copy. */
  let rotationViewToken = ""

  beforeAll(async () => {
    const [a, b] = await Promise.all([openTestDatabase(), openTestDatabase()])
    pg = a!
    pgFresh = b!
    source = await startServer(sqliteUrl)
    api = new Api(source.baseUrl, defaultAdminToken)
    const first = await api.setup({
      spark: "sparkline",
      revenue: "number",
      board: "leaderboard",
      feed: "text-feed",
      xy: "xy-graph",
      doomed: "sparkline",
      empty: "line-graph"
    })
    const second = await api.setup({ "other stream": "list", "ünïcode ✓": "label" })
    revokedKey = first.accessKey
    // A second key that revokes the first: the copy keeps both digests and the revocation.
    const newKey = await api.admin("POST", `/admin/accounts/${first.id}/access-keys?revokeOthers=true`)
    expect(newKey.status, newKey.text).toBe(201)
    const key = newKey.json.accessKey as string
    const push = async (stream: string, point: unknown, k = key) => expectSuccess(await api.pushPoint(k, stream, point))
    await push(
      "spark",
      [1, 2, 3].map((n) => ({ number: n, timestamp: 1_700_000_000 + n / 1000 }))
    )
    expectSuccess(await api.push({ accessKey: key, streamName: "spark", command: "clear" }))
    for (let i = 0; i < 30; i++) await push("spark", { number: i * 1.5 })
    await push("revenue", { number: 100, prefix: "$" })
    for (let i = 0; i < 5; i++) await push("revenue", { delta: i })
    await push("board", { leaderboard: [{ name: "Ann", value: 3 }] })
    await push("board", { leaderboardItem: { name: "Bob", value: 9 } })
    await push("feed", [
      { title: "a", msg: "b" },
      { title: "c", msg: 'd "quoted" \\ \u00e9' }
    ])
    await push("xy", { x: 1, y: -2.5e-7 })
    await push("doomed", { number: 1 })
    const dashboard = async (accountId: string, body: unknown) => {
      const r = await api.admin("POST", `/admin/accounts/${accountId}/dashboards`, body)
      expect(r.status, r.text).toBe(201)
      dashboards.push({ viewToken: r.json.viewToken as string, accountId, json: r.json })
      return dashboards[dashboards.length - 1]!
    }
    // The default layout, made while "doomed" exists: its tile stays after the widget is deleted.
    await dashboard(first.id, { name: "Everything ✓ <b>" })
    const rotated = await dashboard(first.id, {
      name: "Two",
      tiles: [
        { streamName: "spark", title: 'Spark "line" \u00e9', x: 0, y: 0, w: 8, h: 3 },
        { streamName: "revenue", x: 8, y: 0, w: 4, h: 1 }
      ]
    })
    const updated = await api.admin("PUT", `/admin/accounts/${first.id}/dashboards/${rotated.json.id}`, {
      name: "Two, renamed",
      tiles: [{ streamName: "board", title: 'Board "top" \u00e9 <i>', x: 0, y: 0, w: 12, h: 2 }]
    })
    expect(updated.status, updated.text).toBe(200)
    const rotation = await api.admin("POST", `/admin/accounts/${first.id}/dashboards/${rotated.json.id}/view-token`)
    expect(rotation.status, rotation.text).toBe(201)
    rotatedViewToken = rotated.viewToken
    Object.assign(rotated, { viewToken: rotation.json.viewToken as string, json: rotation.json })
    // Deleting a widget leaves a gap in the stream ids, which the copy keeps.
    expect((await api.admin("DELETE", `/admin/accounts/${first.id}/widgets/doomed`)).status).toBe(204)
    await push("other stream", { list: [{ listItem: "x" }] }, second.accessKey)
    await push("other stream", { listItem: "y" }, second.accessKey)
    await push("ünïcode ✓", { label: "ok ✓" }, second.accessKey)
    await dashboard(second.id, { name: "Second" })
    // A rotation of the first account's dashboards, one of them twice, and an empty one.
    const ids = dashboards.filter((d) => d.accountId === first.id).map((d) => d.json.id as string)
    const wall = await api.admin("POST", `/admin/accounts/${first.id}/rotations`, {
      name: "Wall ✓",
      dashboardIds: [ids[1], ids[0], ids[1]],
      intervalSeconds: 30
    })
    expect(wall.status, wall.text).toBe(201)
    rotationViewToken = wall.json.viewToken as string
    const empty = await api.admin("POST", `/admin/accounts/${second.id}/rotations`, {
      name: "Nothing yet",
      dashboardIds: [],
      intervalSeconds: 5
    })
    expect(empty.status, empty.text).toBe(201)
    // Alerts: a receiver with its secret, a rule that fired (its state, version and receivers), the transition and
    // its delivery; stored through the storage port on the server's file.
    await Effect.runPromise(
      Effect.scoped(
        Effect.provide(
          Effect.gen(function* () {
            const accounts = yield* AccountStore
            const alerts = yield* AlertStore
            const accountId = first.id as AccountId
            const widget = (yield* accounts.listWidgets(accountId)).find((w) => w.streamName === "revenue")!
            const now = micros(1_700_000_000_000_000)
            const receiverId = newReceiverId()
            yield* alerts.createReceiver(
              {
                id: receiverId,
                accountId,
                name: "ops ✓",
                kind: "webhook",
                url: "https://hooks.example.com/x",
                hasSecret: true,
                createdAt: now
              },
              "s3cr3t"
            )
            const rule = {
              id: newAlertRuleId(),
              accountId,
              streamId: widget.id,
              name: "Revenue high",
              streamName: StreamName.make("revenue"),
              condition: { above: 10.5 },
              for: 0,
              receiverIds: [receiverId],
              createdAt: now,
              silencedUntil: null,
              evaluation: initialEvaluation(now, null)
            }
            yield* alerts.createRule(rule)
            const at = micros(now + 1_000_000)
            yield* alerts.commitEvaluations([
              {
                rule: rule.id,
                version: 1,
                evaluation: { ...rule.evaluation, state: "firing", stateSince: at, value: 100.25, cursor: at },
                // Silenced: the source server's deliverer never sends it, so both dumps see one state.
                transitions: [{ from: "ok", to: "firing", at, value: 100.25, ts: at, startsAt: at, silenced: true }]
              }
            ])
          }),
          Layer.orDie(Sqlite.layer({ filename: sqliteFile }))
        )
      )
    )
    for (const stream of ["spark", "revenue", "board", "feed", "xy", "empty"]) streams.push({ key, stream })
    for (const stream of ["other stream", "ünïcode ✓"]) streams.push({ key: second.accessKey, stream })
  }, 180_000)

  afterAll(async () => {
    await source?.stop()
    await pg?.close()
    await pgFresh?.close()
    rmSync(dir, { recursive: true, force: true })
  }, 60_000)

  it("copies a running SQLite deployment to PostgreSQL, which then answers every read identically", async () => {
    const copied = await runCli(["copy", "--from", sqliteUrl, "--to", pg.url])
    expect(copied.code, copied.stderr).toBe(0)
    expect(copied.stdout).toMatch(
      /^Copied 2 accounts, 3 access keys, 8 widgets, 3 dashboards, 2 rotations and \d+ entries from the SQLite file .+ to the PostgreSQL database .+; the counts match\.\n$/
    )
    expect(copied.stderr).toMatch(/^copy: accounts 2 of 2 \(100%\), access keys 3 of 3 \(100%\), dashboards 3 of 3/m)
    expect(copied.stderr).not.toContain("postgres://")

    expect(normalised(await dump({ postgres: pg.url }))).toEqual(normalised(await dump({ sqlite: sqliteFile })))
    // The alert tables came along: the receiver with its secret, the firing rule, its transition and delivery.
    const { alerts } = await dump({ postgres: pg.url })
    expect(alerts["alert_receivers"]!.map((r) => r["secret"])).toEqual(["s3cr3t"])
    expect(alerts["alert_rules"]!.map((r) => [r["state"], r["value"], r["version"]])).toEqual([
      ["firing", "100.25", "2"]
    ])
    expect(alerts["alert_rule_receivers"]).toHaveLength(1)
    expect(alerts["alert_events"]!.map((e) => e["to_state"])).toEqual(["firing"])
    expect(alerts["alert_deliveries"]!.map((d) => d["state"])).toEqual(["silenced"])

    const target = await startServer(pg.url)
    try {
      const copy = new Api(target.baseUrl, defaultAdminToken)
      for (const { key, stream } of streams) {
        for (const query of ["", "?since=0", "?since=1700000000.002", "?since=0&limit=3"]) {
          const [a, b] = [await api.read(key, stream, query), await copy.read(key, stream, query)]
          expect([stream, query, b.status, b.text]).toEqual([stream, query, a.status, a.text])
        }
      }
      expect((await copy.read(revokedKey, "spark")).status).toBe(403)
      expect((await copy.read(streams[0]!.key, "doomed")).status).toBe(404)
      // The same view token opens the same dashboard page (name, tiles, the deleted widget's tile) on the copy.
      for (const { viewToken } of dashboards) {
        const [a, b] = [await api.fetch(`/d/${viewToken}`), await copy.fetch(`/d/${viewToken}`)]
        expect(a.status, a.text).toBe(200)
        expect([b.status, b.text]).toEqual([a.status, a.text])
      }
      expect((await copy.fetch(`/d/${rotatedViewToken}`)).status).toBe(404)
      // The rotation's view token opens the same rotation page on the copy.
      const [ra, rb] = [await api.fetch(`/r/${rotationViewToken}`), await copy.fetch(`/r/${rotationViewToken}`)]
      expect(ra.status, ra.text).toBe(200)
      expect([rb.status, rb.text]).toEqual([ra.status, ra.text])
      for (const accountId of new Set(dashboards.map((d) => d.accountId))) {
        const path = `/admin/accounts/${accountId}/rotations`
        const [a, b] = [await api.admin("GET", path), await copy.admin("GET", path)]
        expect(a.status, a.text).toBe(200)
        expect([b.status, b.json]).toEqual([a.status, a.json])
      }
      for (const accountId of new Set(dashboards.map((d) => d.accountId))) {
        const path = `/admin/accounts/${accountId}/dashboards`
        const [a, b] = [await api.admin("GET", path), await copy.admin("GET", path)]
        expect(a.status, a.text).toBe(200)
        expect([b.status, b.json]).toEqual([a.status, a.json])
      }
      // Streams created on the copy get fresh ids, after the copied ones.
      const account = await copy.setup({ fresh: "number" })
      expectSuccess(await copy.pushPoint(account.accessKey, "fresh", 1))
      const after = await dump({ postgres: pg.url })
      const ids = after.streams.map((s) => s.id)
      expect(Math.max(...ids)).toBe(ids[ids.length - 1])
      expect(new Set(ids).size).toBe(ids.length)
    } finally {
      await target.stop()
    }
  }, 120_000)

  /**
   * Reads the store at `url` in one snapshot while `api`'s server stores 5 more pushes to `revenue`: the snapshot
   * does not see them, a read after it does.
   */
  const expectSnapshot = async (url: Url, server: Api, key: string) => {
    const seen = await withCopy(url, (copy) =>
      copy.read((snapshot) =>
        Effect.gen(function* () {
          const before = yield* snapshot.counts
          yield* Effect.promise(async () => {
            for (let i = 0; i < 5; i++) expectSuccess(await server.pushPoint(key, "revenue", { delta: 1 }))
          })
          return { before, after: yield* snapshot.counts, dump: yield* dumpOf(snapshot) }
        })
      )
    )
    expect(seen.after).toEqual(seen.before)
    const revenue = seen.dump.streams.find((s) => s.name === "revenue")!
    const entries = seen.dump.entries.find(([id]) => id === revenue.id)![1]
    expect(entries.length).toBe(seen.before.entries.get(revenue.id))
    const now = await dump(url)
    const later = now.entries.find(([id]) => id === revenue.id)![1]
    expect(later.length).toBe(entries.length + 5)
    expect(now.streams.find((s) => s.id === revenue.id)!.lastTs).toBeGreaterThan(revenue.lastTs!)
  }

  it("reads one consistent snapshot while a running server goes on storing pushes", async () => {
    const key = streams[0]!.key
    await expectSnapshot({ sqlite: sqliteFile }, api, key)
    const target = await startServer(pg.url)
    try {
      await expectSnapshot({ postgres: pg.url }, new Api(target.baseUrl, defaultAdminToken), key)
    } finally {
      await target.stop()
    }
  }, 120_000)

  it("backs PostgreSQL up to a new SQLite file holding the same rows", async () => {
    const backup = join(dir, "backup", "copy.db")
    const before = await dump({ postgres: pg.url })
    const copied = await runCli(["copy", "--from", pg.url, "--to", `sqlite:${backup}`])
    expect(copied.code, copied.stderr).toBe(0)
    expect(copied.stdout).toContain("3 dashboards, 2 rotations and")
    expect(copied.stdout).toContain("the counts match")
    const after = await dump({ sqlite: backup })
    expect(normalised(after)).toEqual(normalised(before))
    // On the backup, each view token resolves to its dashboard as last changed, with its time as stored.
    const resolve = (viewToken: string) =>
      Effect.runPromise(
        Effect.either(Dashboards.resolveView(viewToken)).pipe(Effect.provide(Sqlite.layer({ filename: backup })))
      )
    for (const { viewToken, accountId, json } of dashboards) {
      const view = Either.getOrThrow(await resolve(viewToken))
      const stored = before.dashboards.find((d) => d.id === json.id)!
      expect(view.dashboard).toEqual({
        id: json.id,
        accountId,
        name: json.name,
        tiles: json.tiles,
        viewToken,
        createdAt: stored.createdAt
      })
      // The kept view token came along: the share link is shown again on the copy (docs/api.md section 11).
      expect(stored.viewTokenText).toBe(viewToken)
      expect(view.tiles.filter((t) => t.widget === null).map((t) => t.tile.streamName)).toEqual(
        json.name === "Everything ✓ <b>" ? ["doomed"] : []
      )
    }
    const old = await resolve(rotatedViewToken)
    expect(Either.isLeft(old) && old.left._tag).toBe("DashboardNotFound")
  }, 120_000)

  it("refuses a target that holds accounts, and leaves it as it was", async () => {
    const before = await dump({ postgres: pg.url })
    const refused = await runCli(["copy", "--from", sqliteUrl, "--to", pg.url])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(
      /^dashstream: the PostgreSQL database .+ already holds 3 accounts; copy only into an empty database/m
    )
    expect(await dump({ postgres: pg.url })).toEqual(before)
    const same = await runCli(["copy", "--from", sqliteUrl, "--to", sqliteUrl])
    expect(same.code).toBe(2)
    expect(same.stderr).toContain("--from and --to name the same database")
    const missing = await runCli(["copy", "--from", sqliteUrl])
    expect(missing.code).toBe(2)
  }, 120_000)

  it("leaves nothing in the target when the copy fails midway, so it can simply be run again", async () => {
    const original = await dump({ sqlite: sqliteFile })
    const failing = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const from = yield* Sqlite.openStoreCopy({ filename: sqliteFile })
          const to = yield* Postgres.openStoreCopy(Either.getOrThrow(Postgres.parseUrl(pgFresh.url)))
          let batches = 0
          // The target fails on its third batch of entries, after accounts, keys, widgets and two batches went in.
          const broken: StoreCopy["Type"] = {
            ...to,
            write: (use) =>
              to.write((target) =>
                use({
                  ...target,
                  insertEntries: (stream, rows) =>
                    ++batches === 3
                      ? Effect.fail(new StorageError({ cause: new Error("disk full") }))
                      : target.insertEntries(stream, rows)
                })
              )
          }
          return yield* Effect.either(copyStore(from, broken, { batchSize: 4 }))
        })
      )
    )
    expect(Either.isLeft(failing) && failing.left._tag).toBe("CopyStorageFailed")
    const empty = await dump({ postgres: pgFresh.url })
    expect([
      empty.accounts.length,
      empty.accessKeys.length,
      empty.streams.length,
      empty.dashboards.length,
      empty.rotations.length,
      empty.entries.length
    ]).toEqual([0, 0, 0, 0, 0, 0])
    const again = await runCli(["copy", "--from", sqliteUrl, "--to", pgFresh.url])
    expect(again.code, again.stderr).toBe(0)
    expect(normalised(await dump({ postgres: pgFresh.url }))).toEqual(normalised(original))
  }, 120_000)

  it("counts dashboards in the check: a copy that loses one is reported as not matching", async () => {
    const result = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const from = yield* Sqlite.openStoreCopy({ filename: sqliteFile })
          const to = yield* Sqlite.openStoreCopy({ filename: join(dir, "lossy.db") })
          // The target drops one dashboard (one no rotation shows); everything else goes in.
          const lossy: StoreCopy["Type"] = {
            ...to,
            write: (use) =>
              to.write((target) =>
                use({
                  ...target,
                  insertDashboards: (rows) => target.insertDashboards(rows.filter((r) => r.name !== "Second"))
                })
              )
          }
          return yield* Effect.either(copyStore(from, lossy))
        })
      )
    )
    expect(Either.isLeft(result) && result.left).toEqual(
      new CopyMismatch({ differences: ["dashboards: 3 in the source, 2 in the copy"] })
    )
  }, 120_000)
})
