/**
 * docs/api.md section 18 over the admin API of the real `dashstream serve`, on every backend: receivers and rules
 * created, listed, read, replaced, silenced and deleted; a test notification to a loopback receiver (signed) and to
 * a closed port (502); the transition history after a push crossing a rule's threshold.
 *
 * A rule made through the API is evaluated by the running server (section 18.5): the crossing push follows its
 * creation at once.
 */
import { createHmac } from "node:crypto"
import { freePort } from "@dashstream/storage-postgres/testing"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { receiverServer } from "./alertSupport.js"
import { type Account, backends, expectError, expectSuccess, suiteName, useServer } from "./harness.js"

const secret = "whsec-e2e-0123456789"
const sign = (body: Buffer) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`

for (const backend of backends) {
  describe(suiteName("alert rules and receivers (admin API)", backend), { timeout: 120_000 }, () => {
    const ctx = useServer(backend)
    let account: Account
    let hook: Awaited<ReturnType<typeof receiverServer>>
    const rules = () => `/admin/accounts/${account.id}/alert-rules`
    const receivers = () => `/admin/accounts/${account.id}/receivers`

    beforeAll(async () => {
      account = await ctx.api.setup({ cpu: "number", hot: "number", log: "text-feed" })
      hook = await receiverServer([200])
    })

    afterAll(() => hook?.close())

    it("receivers: create (secret never shown), list, get, PUT keeps the secret, test signed, delete", async () => {
      const created = await ctx.api.admin("POST", receivers(), { name: "ops", kind: "webhook", url: hook.url, secret })
      expect(created.status, created.text).toBe(201)
      expect(created.json).toEqual({
        id: expect.any(String),
        name: "ops",
        kind: "webhook",
        url: hook.url,
        hasSecret: true,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      })
      expect(created.text).not.toContain(secret)
      const path = `${receivers()}/${created.json.id}`
      expect((await ctx.api.admin("GET", path)).json).toEqual(created.json)
      expect((await ctx.api.admin("GET", receivers())).json).toEqual({ receivers: [created.json] })

      const put = await ctx.api.admin("PUT", path, { name: "ops 2", kind: "webhook", url: hook.url })
      expect([put.status, put.json.name, put.json.hasSecret]).toEqual([200, "ops 2", true])

      // The test notification is signed with the kept secret.
      const before = hook.received.length
      const tested = await ctx.api.admin("POST", `${path}/test`)
      expect([tested.status, tested.json]).toEqual([200, { status: 200 }])
      const sent = hook.received[before]!
      expect(sent.headers["x-dashstream-signature"]).toBe(sign(sent.body))
      expect(JSON.parse(sent.body.toString())).toMatchObject({
        version: 1,
        state: "firing",
        rule: { name: "Dashstream test notification", streamName: "test" },
        value: 1
      })

      const closed = await freePort()
      const dead = await ctx.api.admin("POST", receivers(), {
        name: "dead",
        kind: "slack",
        url: `http://127.0.0.1:${closed}/x`
      })
      const unreachable = await ctx.api.admin("POST", `${receivers()}/${dead.json.id}/test`)
      expectError(unreachable, 502, "receiver_unreachable")
      expect(unreachable.json.error.message).toContain("connection refused")

      expect((await ctx.api.admin("DELETE", `${receivers()}/${dead.json.id}`)).status).toBe(204)
      expectError(await ctx.api.admin("GET", `${receivers()}/${dead.json.id}`), 404, "receiver_not_found")
      expectError(
        await ctx.api.admin("POST", receivers(), { name: "x", kind: "pager", url: hook.url }),
        400,
        "invalid_request",
        "kind"
      )
    })

    it("rules: create, list, get, PUT, silence and lift, bad bodies with their path, delete; kept across restarts", async () => {
      const receiver = (await ctx.api.admin("POST", receivers(), { name: "r", kind: "webhook", url: hook.url })).json
      const body = {
        name: "cpu high",
        streamName: "cpu",
        condition: { above: 80 },
        for: 30,
        receiverIds: [receiver.id]
      }
      const created = await ctx.api.admin("POST", rules(), body)
      expect(created.status, created.text).toBe(201)
      expect(created.json).toMatchObject({ ...body, state: "ok", value: null, silencedUntil: null })
      const path = `${rules()}/${created.json.id}`
      expect((await ctx.api.admin("GET", path)).json).toEqual(created.json)
      expect((await ctx.api.admin("GET", rules())).json.rules).toContainEqual(created.json)

      const put = await ctx.api.admin("PUT", path, { ...body, name: "cpu very high", for: 0 })
      expect([put.status, put.json.name, put.json.for, put.json.createdAt]).toEqual([
        200,
        "cpu very high",
        0,
        created.json.createdAt
      ])
      const silenced = await ctx.api.admin("POST", `${path}/silence`, { until: "2099-06-01T00:00:00Z" })
      expect([silenced.status, silenced.json.silencedUntil]).toEqual([200, "2099-06-01T00:00:00.000Z"])

      expectError(
        await ctx.api.admin("POST", rules(), { ...body, streamName: "log" }),
        400,
        "invalid_request",
        "condition"
      )
      expectError(
        await ctx.api.admin("POST", rules(), { ...body, streamName: "x" }),
        400,
        "invalid_request",
        "streamName"
      )
      expectError(
        await ctx.api.admin("POST", rules(), { ...body, receiverIds: [receiver.id, "nope"] }),
        400,
        "invalid_request",
        "receiverIds[1]"
      )

      // Stored on the backend: the same after a restart.
      await ctx.restart()
      expect((await ctx.api.admin("GET", path)).json).toEqual(silenced.json)
      const lifted = await ctx.api.admin("POST", `${path}/silence`, { until: null })
      expect(lifted.json.silencedUntil).toBeNull()

      // Deleting the receiver takes it out of the rule; deleting the rule ends it.
      expect((await ctx.api.admin("DELETE", `${receivers()}/${receiver.id}`)).status).toBe(204)
      expect((await ctx.api.admin("GET", path)).json.receiverIds).toEqual([])
      expect((await ctx.api.admin("DELETE", path)).status).toBe(204)
      expectError(await ctx.api.admin("GET", path), 404, "rule_not_found")
      expectError(await ctx.api.admin("DELETE", path), 404, "rule_not_found")
    })

    it("alert-events: a push crossing the threshold is a transition, delivered, after since (exclusive)", async () => {
      const receiver = (await ctx.api.admin("POST", receivers(), { name: "w", kind: "webhook", url: hook.url, secret }))
        .json
      const rule = await ctx.api.admin("POST", rules(), {
        name: "hot",
        streamName: "hot",
        condition: { above: 90 },
        receiverIds: [receiver.id]
      })
      expect(rule.status, rule.text).toBe(201)
      const since = new Date().toISOString()

      const ts = Math.floor(Date.now() / 1000)
      expectSuccess(await ctx.api.pushPoint(account.accessKey, "hot", { number: 95, timestamp: ts }))
      const events = `/admin/accounts/${account.id}/alert-events`
      await vi.waitFor(
        async () => {
          const r = await ctx.api.admin("GET", `${events}?since=${since}`)
          expect(r.status).toBe(200)
          expect(r.json.events).toHaveLength(1)
          expect(r.json.events[0].deliveries[0].state).toBe("delivered")
        },
        { timeout: 20_000, interval: 200 }
      )
      const [event] = (await ctx.api.admin("GET", `${events}?since=${since}`)).json.events
      expect(event).toEqual({
        id: expect.any(String),
        ruleId: rule.json.id,
        ruleName: "hot",
        streamName: "hot",
        from: "ok",
        to: "firing",
        value: 95,
        ts,
        at: expect.stringMatching(/Z$/),
        deliveries: [{ receiverId: receiver.id, state: "delivered", attempts: 1, lastStatus: 200 }]
      })
      expect((await ctx.api.admin("GET", `${rules()}/${rule.json.id}`)).json).toMatchObject({
        state: "firing",
        value: 95
      })
      const delivered = hook.received.find((r) => JSON.parse(r.body.toString()).rule?.id === rule.json.id)!
      expect(delivered.headers["x-dashstream-signature"]).toBe(sign(delivered.body))

      expect((await ctx.api.admin("GET", `${events}?since=${event.at}`)).json).toEqual({ events: [] })

      // A PUT that keeps the stream, condition and `for` keeps the state; any other change starts it over.
      const rulePath = `${rules()}/${rule.json.id}`
      const body = { streamName: "hot", condition: { above: 90 }, receiverIds: [receiver.id] }
      const renamed = await ctx.api.admin("PUT", rulePath, { ...body, name: "hot, renamed" })
      expect(renamed.json).toMatchObject({ name: "hot, renamed", state: "firing", value: 95 })
      const moved = await ctx.api.admin("PUT", rulePath, { ...body, name: "hot", condition: { above: 99 } })
      expect(moved.json).toMatchObject({ state: "ok", value: null, condition: { above: 99 } })
      expectError(await ctx.api.admin("GET", `${events}?since=soon`), 400, "invalid_request", "since")
    })
  })
}
