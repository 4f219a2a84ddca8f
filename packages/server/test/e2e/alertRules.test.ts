/**
 * docs/api.md section 18, "Evaluation", against the real `dashstream serve`: a rule stored by another process while
 * the server runs (as the CLI stores it, through the storage of the same database) is evaluated from the next push,
 * whose crossing reaches a webhook on loopback within seconds; a rule deleted the same way stops notifying. A change
 * of a firing rule's receivers only (an edit, a receiver's deletion) keeps it firing and decides who gets the next
 * transition.
 */
import { AlertStore, type AccountId, type AlertRuleId } from "@dashstream/core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { addRules, events, receiverServer, run } from "./alertSupport.js"
import { type Account, backends, expectSuccess, suiteName, useServer } from "./harness.js"

for (const backend of backends) {
  describe(suiteName("alert rules changed while serving", backend), { timeout: 120_000 }, () => {
    const ctx = useServer(backend)
    let account: Account
    let hook: Awaited<ReturnType<typeof receiverServer>>

    beforeAll(async () => {
      account = await ctx.api.setup({ cpu: "number", disk: "number" })
      hook = await receiverServer([200])
    })

    afterAll(() => hook?.close())

    it("a rule stored by another process notifies the webhook of the next crossing push; deleted, it stops", async () => {
      // The server's engine has no rule at all when this one is stored.
      const [ruleId] = await addRules(ctx.db.url, account, [
        { name: "CPU hot", stream: "cpu", condition: { above: 90 }, webhooks: [hook.url] }
      ])
      // A change reaches every engine within a second.
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      const pushed = Date.now()
      expectSuccess(await ctx.api.pushPoint(account.accessKey, "cpu", 95))
      await vi.waitFor(() => expect(hook.received).toHaveLength(1), { timeout: 5_000, interval: 50 })
      const body = JSON.parse(hook.received[0]!.body.toString())
      expect(body).toMatchObject({ state: "firing", value: 95, rule: { id: ruleId, name: "CPU hot" } })
      expect(hook.received[0]!.at - pushed).toBeLessThan(3_000)

      await run(
        ctx.db.url,
        Effect.flatMap(AlertStore, (alerts) => alerts.deleteRule(account.id as AccountId, ruleId as AlertRuleId))
      )
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      expectSuccess(await ctx.api.pushPoint(account.accessKey, "cpu", 10))
      expectSuccess(await ctx.api.pushPoint(account.accessKey, "cpu", 99))
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      expect(hook.received).toHaveLength(1)
      expect((await events(ctx.db.url, account)).map((e) => `${e.from}->${e.to}`)).toEqual(["ok->firing"])
    })

    it("a receiver added to a firing rule gets its resolution; a receiver deleted gets no more", async () => {
      const second = await receiverServer([200])
      try {
        const receiver = async (url: string) =>
          (await ctx.api.admin("POST", `/admin/accounts/${account.id}/receivers`, { name: url, kind: "webhook", url }))
            .json.id as string
        const [a, b] = [await receiver(hook.url), await receiver(second.url)]
        const rules = `/admin/accounts/${account.id}/alert-rules`
        const rule = { name: "Disk full", streamName: "disk", condition: { above: 90 }, receiverIds: [a] }
        const created = await ctx.api.admin("POST", rules, rule)
        expect(created.status).toBe(201)
        const before = hook.received.length
        expectSuccess(await ctx.api.pushPoint(account.accessKey, "disk", 95))
        await vi.waitFor(() => expect(hook.received).toHaveLength(before + 1), { timeout: 5_000, interval: 50 })
        // Only the receivers change: the rule keeps firing, and the change reaches the engine as any edit does.
        const put = await ctx.api.admin("PUT", `${rules}/${created.json.id}`, { ...rule, receiverIds: [a, b] })
        expect(put.json).toMatchObject({ state: "firing", receiverIds: [a, b] })
        await new Promise((resolve) => setTimeout(resolve, 1_000))
        expectSuccess(await ctx.api.pushPoint(account.accessKey, "disk", 10))
        await vi.waitFor(() => expect(second.received).toHaveLength(1), { timeout: 5_000, interval: 50 })
        expect(JSON.parse(second.received[0]!.body.toString())).toMatchObject({ state: "resolved", value: 10 })
        await vi.waitFor(() => expect(hook.received).toHaveLength(before + 2), { timeout: 5_000, interval: 50 })
        // The first receiver deleted: its id leaves the rule, the next firing goes to the second only.
        expect((await ctx.api.admin("DELETE", `/admin/accounts/${account.id}/receivers/${a}`)).status).toBe(204)
        expect((await ctx.api.admin("GET", `${rules}/${created.json.id}`)).json.receiverIds).toEqual([b])
        await new Promise((resolve) => setTimeout(resolve, 1_000))
        expectSuccess(await ctx.api.pushPoint(account.accessKey, "disk", 97))
        await vi.waitFor(() => expect(second.received).toHaveLength(2), { timeout: 5_000, interval: 50 })
        expect(JSON.parse(second.received[1]!.body.toString())).toMatchObject({ state: "firing", value: 97 })
        await new Promise((resolve) => setTimeout(resolve, 1_000))
        expect(hook.received).toHaveLength(before + 2)
        const last = (await events(ctx.db.url, account)).at(-1)!
        expect(last.deliveries.map((d) => d.receiverId)).toEqual([b])
      } finally {
        await second.close()
      }
    })
  })
}
