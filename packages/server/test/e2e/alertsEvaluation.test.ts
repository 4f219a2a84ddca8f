/**
 * docs/api.md section 18 through the admin API of the real `dashstream serve`, on every backend, for what the
 * other alert suites leave to unit tests: a receiver's secret kept, replaced and removed (seen by the signature of a
 * test notification) and a test answered 200 with a receiver's 500; an array push whose entries make two transitions;
 * a pending rule going back to `ok` without a transition, and firing at its deadline with `ts` and `value` `null`;
 * transitions made while silenced recorded as `silenced` and never sent, also not once the silence ends; a widget's
 * deletion taking its rules; deadlines (`for`, `noDataFor`) kept across a restart; every time in the answers in
 * ISO 8601 UTC.
 */
import { createHmac } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Answer, eventually, receiverServer } from "./alertSupport.js"
import { type Account, backends, expectError, expectSuccess, suiteName, useServer } from "./harness.js"

/** An ISO 8601 UTC time as the admin API writes it (to the millisecond, `Z`). */
const isoUtc = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

const sign = (secret: string, body: Buffer) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

for (const backend of backends) {
  describe(suiteName("alert evaluation and silences (admin API)", backend), { timeout: 120_000 }, () => {
    const ctx = useServer(backend)
    let account: Account
    let hook: Awaited<ReturnType<typeof receiverServer>>
    // What the hook answers next: the test notification of a receiver answered 500 sets it to 500 for one request.
    let answer: Answer = 200
    const rules = () => `/admin/accounts/${account.id}/alert-rules`
    const receivers = () => `/admin/accounts/${account.id}/receivers`
    const eventsPath = () => `/admin/accounts/${account.id}/alert-events`

    beforeAll(async () => {
      account = await ctx.api.setup({
        series: "sparkline",
        slow: "number",
        muted: "number",
        gone: "number",
        late: "number",
        queue: "number",
        held: "number",
        quiet: "text-feed"
      })
      hook = await receiverServer(() => answer)
    })

    afterAll(() => hook?.close())

    /** The bodies the hook got for `ruleId`, parsed, in the order they arrived. */
    const sentFor = (ruleId: string) =>
      hook.received.map((r) => JSON.parse(r.body.toString())).filter((body) => body.rule?.id === ruleId)

    /** The account's transitions of `ruleId`, read through the API. */
    const eventsOf = async (ruleId: string): Promise<Array<any>> => {
      const r = await ctx.api.admin("GET", eventsPath())
      expect(r.status, r.text).toBe(200)
      return r.json.events.filter((e: any) => e.ruleId === ruleId)
    }

    const newReceiver = async (body: Record<string, unknown>) => {
      const r = await ctx.api.admin("POST", receivers(), { kind: "webhook", url: hook.url, ...body })
      expect(r.status, r.text).toBe(201)
      return r.json as { id: string }
    }

    const newRule = async (body: Record<string, unknown>) => {
      const r = await ctx.api.admin("POST", rules(), body)
      expect(r.status, r.text).toBe(201)
      expect(r.json.createdAt).toMatch(isoUtc)
      expect(r.json.stateSince).toMatch(isoUtc)
      return r.json as { id: string }
    }

    it("a receiver's secret: never shown, kept by a PUT without it, replaced, removed by null; a 500 test is 200", async () => {
      const created = await ctx.api.admin("POST", receivers(), {
        name: "signed",
        kind: "webhook",
        url: hook.url,
        secret: "first-secret"
      })
      expect(created.status).toBe(201)
      expect(created.text).not.toContain("first-secret")
      const path = `${receivers()}/${created.json.id}`
      const tested = async (status: Answer) => {
        answer = status
        const before = hook.received.length
        const r = await ctx.api.admin("POST", `${path}/test`)
        answer = 200
        expect(hook.received).toHaveLength(before + 1)
        return { reply: r, got: hook.received[before]! }
      }
      const put = async (body: Record<string, unknown>) => {
        const r = await ctx.api.admin("PUT", path, { name: "signed", kind: "webhook", url: hook.url, ...body })
        expect(r.status, r.text).toBe(200)
        expect(r.text).not.toContain('secret"')
        return r.json
      }

      expect((await put({})).hasSecret).toBe(true)
      const kept = await tested(200)
      expect(kept.got.headers["x-dashstream-signature"]).toBe(sign("first-secret", kept.got.body))

      expect((await put({ secret: "second-secret" })).hasSecret).toBe(true)
      const replaced = await tested(200)
      expect(replaced.got.headers["x-dashstream-signature"]).toBe(sign("second-secret", replaced.got.body))

      const removed = await put({ secret: null })
      expect(removed.hasSecret).toBe(false)
      expect((await ctx.api.admin("GET", path)).json.hasSecret).toBe(false)
      const unsigned = await tested(500)
      expect(unsigned.got.headers["x-dashstream-signature"]).toBeUndefined()
      // The receiver's status, whatever it is, in a 200.
      expect([unsigned.reply.status, unsigned.reply.json]).toEqual([200, { status: 500 }])
      expect((await ctx.api.admin("GET", receivers())).text).not.toContain('secret"')
    })

    it("an array push of three entries makes two transitions, each with its entry's value and ts, sent in order", async () => {
      const receiver = await newReceiver({ name: "series" })
      const rule = await newRule({
        name: "series high",
        streamName: "series",
        condition: { above: 50 },
        receiverIds: [receiver.id]
      })
      const t = Math.floor(Date.now() / 1000)
      expectSuccess(
        await ctx.api.pushPoint(account.accessKey, "series", [
          { number: 60, timestamp: t - 2 },
          { number: 10, timestamp: t - 1 },
          { number: 5, timestamp: t }
        ])
      )
      await eventually(async () => {
        const events = await eventsOf(rule.id)
        expect(events.map((e) => [e.from, e.to, e.value, e.ts, e.deliveries[0].state])).toEqual([
          ["ok", "firing", 60, t - 2, "delivered"],
          ["firing", "ok", 10, t - 1, "delivered"]
        ])
        for (const e of events) expect(e.at).toMatch(isoUtc)
      }, 10_000)
      const sent = sentFor(rule.id)
      expect(sent.map((b) => [b.state, b.value, b.ts])).toEqual([
        ["firing", 60, t - 2],
        ["resolved", 10, t - 1]
      ])
      expect(sent[0].startsAt).toMatch(isoUtc)
      expect(sent[0].endsAt).toBeUndefined()
      expect(sent[1].startsAt).toBe(sent[0].startsAt)
      expect(sent[1].endsAt).toMatch(isoUtc)
      expect((await ctx.api.admin("GET", `${rules()}/${rule.id}`)).json).toMatchObject({ state: "ok", value: 5 })
    })

    it("pending goes back to ok with no transition; left pending, the rule fires at its deadline with ts null", async () => {
      const receiver = await newReceiver({ name: "slow" })
      const rule = await newRule({
        name: "slow high",
        streamName: "slow",
        condition: { above: 50 },
        for: 2,
        receiverIds: [receiver.id]
      })
      const path = `${rules()}/${rule.id}`
      expectSuccess(await ctx.api.pushPoint(account.accessKey, "slow", 60))
      await eventually(async () => expect((await ctx.api.admin("GET", path)).json.state).toBe("pending"), 5_000)
      expectSuccess(await ctx.api.pushPoint(account.accessKey, "slow", 10))
      await eventually(async () => expect((await ctx.api.admin("GET", path)).json.state).toBe("ok"), 5_000)
      // Past the first run's deadline: nothing fired, nothing recorded, nothing sent.
      await sleep(3_000)
      expect((await ctx.api.admin("GET", path)).json.state).toBe("ok")
      expect(await eventsOf(rule.id)).toEqual([])
      expect(sentFor(rule.id)).toEqual([])

      const pushedAt = Date.now()
      expectSuccess(await ctx.api.pushPoint(account.accessKey, "slow", 70))
      await eventually(async () => {
        const events = await eventsOf(rule.id)
        expect(events.map((e) => [e.from, e.to, e.value, e.ts, e.deliveries[0].state])).toEqual([
          ["pending", "firing", null, null, "delivered"]
        ])
      }, 10_000)
      const [fired] = await eventsOf(rule.id)
      // At its deadline: `for` after the entry (the server's receive time), give or take a loaded machine.
      const late = Date.parse(fired.at) - (pushedAt + 2_000)
      expect(late).toBeGreaterThanOrEqual(-500)
      expect(late).toBeLessThan(2_000)
      expect(sentFor(rule.id).map((b) => [b.state, b.value, b.ts])).toEqual([["firing", null, null]])
      expect((await ctx.api.admin("GET", path)).json).toMatchObject({ state: "firing", stateSince: fired.at })
    })

    it("while silenced, transitions are recorded as silenced and never sent, also not once the silence ends", async () => {
      const receiver = await newReceiver({ name: "muted" })
      const rule = await newRule({
        name: "muted high",
        streamName: "muted",
        condition: { above: 50 },
        receiverIds: [receiver.id]
      })
      const path = `${rules()}/${rule.id}`
      const until = new Date(Date.now() + 3_000)
      const silenced = await ctx.api.admin("POST", `${path}/silence`, { until: until.toISOString() })
      expect([silenced.status, silenced.json.silencedUntil]).toEqual([200, until.toISOString()])
      expectSuccess(await ctx.api.pushPoint(account.accessKey, "muted", 95))
      expectSuccess(await ctx.api.pushPoint(account.accessKey, "muted", 5))
      await eventually(async () => {
        const events = await eventsOf(rule.id)
        expect(events.map((e) => [e.to, e.deliveries])).toEqual([
          ["firing", [{ receiverId: receiver.id, state: "silenced", attempts: 0, lastStatus: null }]],
          ["ok", [{ receiverId: receiver.id, state: "silenced", attempts: 0, lastStatus: null }]]
        ])
      }, 10_000)
      // The silence ends; what was recorded during it stays unsent.
      await sleep(Math.max(0, until.getTime() - Date.now()) + 2_000)
      expect(sentFor(rule.id)).toEqual([])
      expect((await eventsOf(rule.id)).map((e) => e.deliveries[0].state)).toEqual(["silenced", "silenced"])

      // After it, a transition is sent: the receiver works.
      expectSuccess(await ctx.api.pushPoint(account.accessKey, "muted", 96))
      await eventually(() => expect(sentFor(rule.id).map((b) => [b.state, b.value])).toEqual([["firing", 96]]), 10_000)

      // A silence lifted with null: the next transition is sent again.
      const far = await ctx.api.admin("POST", `${path}/silence`, { until: "2099-01-01T01:00:00+01:00" })
      expect(far.json.silencedUntil).toBe("2099-01-01T00:00:00.000Z")
      expectSuccess(await ctx.api.pushPoint(account.accessKey, "muted", 4))
      await eventually(async () => expect((await eventsOf(rule.id)).at(-1).deliveries[0].state).toBe("silenced"))
      const lifted = await ctx.api.admin("POST", `${path}/silence`, { until: null })
      expect([lifted.status, lifted.json.silencedUntil]).toEqual([200, null])
      expectSuccess(await ctx.api.pushPoint(account.accessKey, "muted", 97))
      await eventually(
        () =>
          expect(sentFor(rule.id).map((b) => [b.state, b.value])).toEqual([
            ["firing", 96],
            ["firing", 97]
          ]),
        10_000
      )
      expect((await eventsOf(rule.id)).map((e) => [e.to, e.deliveries[0].state])).toEqual([
        ["firing", "silenced"],
        ["ok", "silenced"],
        ["firing", "delivered"],
        ["ok", "silenced"],
        ["firing", "delivered"]
      ])
    })

    it("a receiver that does not answer within 10 s: the attempt is retried, the test notification is a 502", async () => {
      const late = await receiverServer(["hang", 200])
      const mute = await receiverServer(["hang"])
      try {
        const receiver = await newReceiver({ name: "late", url: late.url })
        const silent = await newReceiver({ name: "mute", url: mute.url })
        const rule = await newRule({
          name: "late high",
          streamName: "late",
          condition: { above: 50 },
          receiverIds: [receiver.id]
        })
        expectSuccess(await ctx.api.pushPoint(account.accessKey, "late", 99))
        const testedAt = Date.now()
        const tested = await ctx.api.admin("POST", `${receivers()}/${silent.id}/test`)
        expect(Date.now() - testedAt).toBeGreaterThanOrEqual(10_000 - 100)
        expectError(tested, 502, "receiver_unreachable")
        expect(tested.json.error.message).toContain("timed out after 10 s")
        await eventually(() => expect(late.received).toHaveLength(2), 20_000)
        const [first, second] = late.received
        // 10 s without an answer, then the first retry's second (jitter at most 10%), on a loaded machine (the 10 s
        // start before the request reaches the receiver).
        const gap = second!.at - first!.at
        expect(gap).toBeGreaterThanOrEqual(10_000 + 900 - 500)
        expect(gap).toBeLessThan(10_000 + 1_100 + 3_000)
        expect(second!.headers["x-dashstream-event-id"]).toBe(first!.headers["x-dashstream-event-id"])
        expect(second!.body.equals(first!.body)).toBe(true)
        await eventually(async () => {
          expect((await eventsOf(rule.id)).map((e) => e.deliveries)).toEqual([
            [{ receiverId: receiver.id, state: "delivered", attempts: 2, lastStatus: 200 }]
          ])
        })
        for (const url of [late.url, mute.url]) expect(ctx.server.output()).not.toContain(url)
      } finally {
        await Promise.all([late.close(), mute.close()])
      }
    })

    it("a slack receiver gets one text naming the rule, firing then resolved, the stream and the value", async () => {
      const chat = await receiverServer([200])
      try {
        const receiver = await newReceiver({ name: "chat", kind: "slack", url: chat.url })
        await newRule({ name: "Queue long", streamName: "queue", condition: { above: 50 }, receiverIds: [receiver.id] })
        expectSuccess(await ctx.api.pushPoint(account.accessKey, "queue", 77))
        expectSuccess(await ctx.api.pushPoint(account.accessKey, "queue", 7))
        await eventually(() => expect(chat.received).toHaveLength(2), 10_000)
        const [fired, back] = chat.received.map((r) => JSON.parse(r.body.toString()))
        expect(Object.keys(fired)).toEqual(["text"])
        for (const word of ["Queue long", "firing", "queue", "77"]) expect(fired.text).toContain(word)
        for (const word of ["Queue long", "resolved", "queue", "7"]) expect(back.text).toContain(word)
        expect(back.text).not.toContain("firing")
        expect(chat.received[0]!.headers["content-type"]).toMatch(/^application\/json/)
      } finally {
        await chat.close()
      }
    })

    it("deleting a widget deletes its rules", async () => {
      const rule = await newRule({ name: "gone high", streamName: "gone", condition: { above: 1 }, receiverIds: [] })
      const kept = await newRule({ name: "held high", streamName: "held", condition: { above: 1 }, receiverIds: [] })
      expect((await ctx.api.admin("DELETE", `/admin/accounts/${account.id}/widgets/gone`)).status).toBe(204)
      expectError(await ctx.api.admin("GET", `${rules()}/${rule.id}`), 404, "rule_not_found")
      const listed = (await ctx.api.admin("GET", rules())).json.rules.map((r: any) => r.id)
      expect(listed).toContain(kept.id)
      expect(listed).not.toContain(rule.id)
    })

    it("the history read on from each page's last at gives every transition once, ascending, 1,000 at most", async () => {
      const own = await ctx.api.setup({ flapping: "sparkline" })
      const history = `/admin/accounts/${own.id}/alert-events`
      const made = await ctx.api.admin("POST", `/admin/accounts/${own.id}/alert-rules`, {
        name: "flapping",
        streamName: "flapping",
        condition: { above: 50 },
        receiverIds: []
      })
      expect(made.status, made.text).toBe(201)
      // Entries alternately meeting the condition and not: each one a transition, those of one push in one
      // millisecond. 998 then 4 put the 1,000th transition inside the second push's millisecond.
      const flaps = (count: number, from: number) =>
        Array.from({ length: count }, (_, i) => ({ number: i % 2 === 0 ? 60 : 10, timestamp: from + i }))
      const t = Math.floor(Date.now() / 1000) - 10_000
      expectSuccess(await ctx.api.pushPoint(own.accessKey, "flapping", flaps(998, t)))
      let firstAt = ""
      await eventually(async () => {
        const first = (await ctx.api.admin("GET", history)).json.events
        expect(first).toHaveLength(998)
        firstAt = first.at(-1).at
      })
      expectSuccess(await ctx.api.pushPoint(own.accessKey, "flapping", flaps(4, t + 5_000)))
      await eventually(async () => {
        expect((await ctx.api.admin("GET", `${history}?since=${firstAt}`)).json.events).toHaveLength(4)
      })
      const pages: Array<Array<any>> = []
      let since: string | undefined
      for (let read = 0; read < 10; read++) {
        const r = await ctx.api.admin("GET", since === undefined ? history : `${history}?since=${since}`)
        expect(r.status, r.text).toBe(200)
        if (r.json.events.length === 0) break
        pages.push(r.json.events)
        since = r.json.events.at(-1).at
      }
      for (const page of pages) expect(page.length).toBeLessThanOrEqual(1_000)
      const all = pages.flat()
      expect(all.map((e) => e.ts)).toEqual(
        [...Array(998).keys()].map((i) => t + i).concat([0, 1, 2, 3].map((i) => t + 5_000 + i))
      )
      expect(new Set(all.map((e) => e.id)).size).toBe(1_002)
      const times = all.map((e) => Date.parse(e.at))
      expect(times).toEqual([...times].sort((a, b) => a - b))
    })

    it("deadlines are kept across a restart: a pending for and a noDataFor fire once the server is back", async () => {
      const receiver = await newReceiver({ name: "deadlines" })
      const pending = await newRule({
        name: "held long",
        streamName: "held",
        condition: { above: 50 },
        for: 8,
        receiverIds: [receiver.id]
      })
      const quiet = await newRule({
        name: "quiet feed",
        streamName: "quiet",
        condition: { noDataFor: 10 },
        receiverIds: [receiver.id]
      })
      const quietSince = Date.now()
      expectSuccess(await ctx.api.pushPoint(account.accessKey, "held", 60))
      await eventually(async () => {
        expect((await ctx.api.admin("GET", `${rules()}/${pending.id}`)).json.state).toBe("pending")
      }, 5_000)
      // The process that scheduled both deadlines goes (it has exited when the next one starts); the next one has
      // only what is stored. A restart takes a few seconds: both deadlines are still ahead.
      await ctx.restart()
      const restartedAt = Date.now()
      expect(restartedAt - quietSince, "restart in time for the deadlines").toBeLessThan(8_000)
      await eventually(async () => {
        expect(sentFor(pending.id).map((b) => [b.state, b.ts])).toEqual([["firing", null]])
        expect(sentFor(quiet.id).map((b) => [b.state, b.ts])).toEqual([["firing", null]])
      }, 20_000)
      const [quietFired] = await eventsOf(quiet.id)
      const [pendingFired] = await eventsOf(pending.id)
      expect([pendingFired.from, pendingFired.to]).toEqual(["pending", "firing"])
      // Made by the restarted process, at their deadlines.
      for (const fired of [quietFired, pendingFired]) expect(Date.parse(fired.at)).toBeGreaterThanOrEqual(restartedAt)
      expect(Date.parse(quietFired.at) - quietSince).toBeGreaterThanOrEqual(10_000 - 500)
      expect(Date.parse(pendingFired.at) - quietSince).toBeGreaterThanOrEqual(8_000 - 500)

      // The next entry resolves the noDataFor rule.
      expectSuccess(await ctx.api.pushPoint(account.accessKey, "quiet", { title: "back", msg: "again" }))
      await eventually(() => expect(sentFor(quiet.id).map((b) => b.state)).toEqual(["firing", "resolved"]), 10_000)
    })
  })
}
