/**
 * docs/api.md section 18, "Evaluation", against the real `dashstream serve`: a rule stored by another process while
 * the server runs (as the CLI stores it, through the storage of the same database) is evaluated from the next push,
 * whose crossing reaches a webhook on loopback within seconds; a rule deleted the same way stops notifying.
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
  })
}
