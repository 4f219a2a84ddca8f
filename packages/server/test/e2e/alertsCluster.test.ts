/**
 * docs/api.md section 18 with several processes on one PostgreSQL: three `dashstream serve` processes on one
 * database, each running its alert engine and deliverer, get pushes spread over them that make many transitions
 * (firing and resolved, several rules, two rules on one stream); every transition is stored once and reaches the
 * webhook receiver exactly once, by its `X-Dashstream-Event-Id`.
 *
 * PostgreSQL only (a SQLite file has one alerts process: see alerts.test.ts); rules and receivers are stored through
 * the storage adapter while no server runs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addRule, events, eventually, receiverServer } from "./alertSupport.js"
import {
  type Account,
  Api,
  backends,
  type Database,
  expectSuccess,
  type RunningServer,
  startServer,
  suiteName
} from "./harness.js"

/** The values pushed to each stream, in order, and the transitions each rule must make of them. */
const streams = ["s0", "s1", "s2"] as const
const values = [95, 5, 96, 4, 97, 3]
const aboveTransitions = ["firing", "ok", "firing", "ok", "firing", "ok"]
// `below 10` on s0: 5 fires, 96 resolves, 4 fires, 97 resolves, 3 fires.
const belowTransitions = ["firing", "ok", "firing", "ok", "firing"]

for (const backend of backends.filter((b) => b.name === "postgres")) {
  describe(suiteName("alerts with three processes on one database", backend), { timeout: 240_000 }, () => {
    let db: Database | undefined
    const servers: Array<RunningServer> = []
    let account: Account
    let hook: Awaited<ReturnType<typeof receiverServer>>
    const rules: Record<string, string> = {}

    beforeAll(async () => {
      db = await backend.database()
      const first = await startServer(db.url)
      account = await new Api(first.baseUrl).setup({ s0: "number", s1: "number", s2: "number" })
      await first.stop()
      hook = await receiverServer([200])
      for (const stream of streams) {
        rules[stream] = await addRule(db.url, account, { stream, kind: "webhook", url: hook.url, secret: null })
      }
      rules["low"] = await addRule(db.url, account, {
        stream: "s0",
        kind: "webhook",
        url: hook.url,
        secret: null,
        condition: { below: 10 },
        name: "s0 too low"
      })
      servers.push(...(await Promise.all([0, 1, 2].map(() => startServer(db!.url)))))
    }, 240_000)

    afterAll(async () => {
      await Promise.allSettled(servers.map((s) => s.stop()))
      await hook?.close()
      await db?.drop()
    }, 60_000)

    it("pushes spread over the processes: every transition stored once and delivered exactly once", async () => {
      const apis = servers.map((s) => new Api(s.baseUrl))
      let turn = 0
      for (const value of values) {
        // Each value to every stream, each push through the next process in turn.
        for (const stream of streams) {
          expectSuccess(await apis[turn++ % apis.length]!.pushPoint(account.accessKey, stream, value))
        }
      }
      const expected = 3 * aboveTransitions.length + belowTransitions.length
      await eventually(async () => {
        const stored = await events(db!.url, account)
        expect(stored).toHaveLength(expected)
        expect(stored.every((e) => e.deliveries[0]?.state === "delivered")).toBe(true)
      }, 60_000)
      // Time for a second delivery of any transition to arrive, if one were made.
      await new Promise((resolve) => setTimeout(resolve, 3000))

      const stored = await events(db!.url, account)
      expect(stored).toHaveLength(expected)
      const toStates = (rule: string) => stored.filter((e) => e.ruleId === rule).map((e) => e.to)
      for (const stream of streams) expect(toStates(rules[stream]!)).toEqual(aboveTransitions)
      expect(toStates(rules["low"]!)).toEqual(belowTransitions)
      for (const event of stored) expect(event.deliveries.map((d) => [d.state, d.attempts])).toEqual([["delivered", 1]])

      const perId = new Map<string, number>()
      for (const r of hook.received) {
        const id = String(r.headers["x-dashstream-event-id"])
        perId.set(id, (perId.get(id) ?? 0) + 1)
      }
      expect(hook.received).toHaveLength(expected)
      expect(perId.size).toBe(expected)
      expect([...perId.values()].every((n) => n === 1)).toBe(true)
      // Each delivered body is one of the stored transitions, in the state it names.
      const bodies = hook.received.map((r) => JSON.parse(r.body.toString()) as { state: string; rule: { id: string } })
      const firingSent = bodies.filter((b) => b.state === "firing").length
      expect(firingSent).toBe(stored.filter((e) => e.to === "firing").length)
      expect(bodies.length - firingSent).toBe(stored.filter((e) => e.to === "ok").length)
      // Every process took part in the work: each was sent pushes and runs engine and deliverer.
      for (const server of servers) expect(server.output()).toContain("alert engine and deliverer started")
    })
  })
}
