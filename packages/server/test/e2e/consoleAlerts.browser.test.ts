/**
 * Alerts in the console (docs/api.md sections 14 and 18.5), in Debian's Chromium against a real server on SQLite: a
 * receiver (a loopback HTTP receiver the test runs) and a rule made in the page, a refused body shown on the field its
 * `path` names with nothing stored, a test notification answered with the receiver's status (and the reason when it
 * cannot be reached), a rule silenced and its silence lifted, a receiver's secret kept and removed on edit, a rule
 * listed as firing (in the alert colour) after a crossing push, both deleted after a confirmation; no horizontal
 * scrollbar at 1280 and 1920 px with a long name; no console error, no request elsewhere.
 *
 * The account and the rule that fires are made through the admin API before the server is started again on the same
 * database; the page talks to it after that restart.
 */
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Page } from "@playwright/test"
import { freePort } from "@dashstream/storage-postgres/testing"
import { until } from "@dashstream/dashboard-web/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { q, signInToConsole, text, unexpectedErrors, useBrowserSuite } from "./browserHarness.js"

/** A stream (and a rule named after it) whose name is longer than any column it is shown in. */
const longName = `${"warehouse_cold_room_temperature_by_building_and_floor_".repeat(3)}probe_4`
const secret = "console-alerts-signing-key"

interface RuleJson {
  readonly id: string
  readonly name: string
  readonly streamName: string
  readonly condition: Record<string, number>
  readonly for: number
  readonly receiverIds: ReadonlyArray<string>
  readonly state: string
  readonly silencedUntil: string | null
}
interface ReceiverJson {
  readonly id: string
  readonly name: string
  readonly url: string
  readonly hasSecret: boolean
}

describe("alerts in the console", { timeout: 240_000 }, () => {
  // A fixed port, so that the page's origin stays the same when the server is started again.
  const suite = useBrowserSuite({
    serve: async () => ({ extraArgs: ["--port", String(await freePort())] }),
    page: { viewport: { width: 1440, height: 900 } }
  })
  let page: Page
  let accountId: string
  let accessKey: string
  let hotRuleId: string
  let receiverId: string
  let ruleId: string
  const received: Array<{ readonly headers: IncomingMessage["headers"]; readonly body: string }> = []
  let receiver: Server
  let receiverUrl: string
  let closedUrl: string

  const accountPath = () => `/admin/accounts/${accountId}`
  const stored = async <A>(path: string, key: string): Promise<ReadonlyArray<A>> => {
    const r = await suite.api.admin("GET", `${accountPath()}/${path}`)
    expect(r.status, r.text).toBe(200)
    return r.json[key] as ReadonlyArray<A>
  }
  const storedRules = () => stored<RuleJson>("alert-rules", "rules")
  const storedReceivers = () => stored<ReceiverJson>("receivers", "receivers")
  const alerts = 'section[aria-label="Alerts"]'
  const ruleRow = (id: string) => `${alerts} .cw-alert-rules tr[data-rule="${id}"]`
  const receiverRow = (id: string) => `${alerts} .cw-receivers tr[data-receiver="${id}"]`
  /** The field message beside the input or select named `name`. */
  const fieldMessage = (name: string) => `.cw-field:has([name="${name}"]) .cw-field-error`
  const openAccount = async () => {
    // Read afresh: a goto to the address the page is at already changes nothing.
    await page.goto(`${suite.server.baseUrl}/console#/accounts/${accountId}`)
    await page.reload()
    await until(page, `${q(`${alerts} .cw-alert-rules`)} !== null`, 10_000)
  }

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = ""
      req.on("data", (d: Buffer) => (body += d.toString()))
      req.on("end", () => {
        received.push({ headers: req.headers, body })
        res.writeHead(202).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
    // A port that was just free and is closed again: a connection to it is refused.
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/hook`
    await new Promise<void>((resolve) => closed.close(() => resolve()))

    // The account and the rule that fires are made first, then the server is started again on its database.
    const account = await suite.api.setup({ cpu: "number", [longName]: "number" })
    accountId = account.id
    accessKey = account.accessKey
    const hot = await suite.api.admin("POST", `${accountPath()}/alert-rules`, {
      name: "CPU hot",
      streamName: "cpu",
      condition: { above: 90 },
      receiverIds: []
    })
    expect(hot.status, hot.text).toBe(201)
    hotRuleId = hot.json.id as string
    await suite.restart()
    page = suite.page
    await signInToConsole(page, suite.server.baseUrl)
  }, 240_000)

  afterAll(async () => {
    await new Promise<void>((resolve) => (receiver === undefined ? resolve() : receiver.close(() => resolve())))
  })

  it("lists the account's rules: condition as a person reads it, for, state", async () => {
    await openAccount()
    const row = ruleRow(hotRuleId)
    await until(page, `${q(row)} !== null`, 10_000)
    const cells = await page.locator(`${row} td`).evaluateAll((tds) => tds.map((td) => td.textContent!.trim()))
    expect(cells.slice(0, 4)).toEqual(["CPU hot", "cpu", "above 90", "0 s"])
    expect(await page.getAttribute(`${row} .cw-state`, "data-state")).toBe("ok")
    expect(await text(page, alerts)).toContain("No receivers yet.")
  })

  it("creates a receiver: a refused URL is shown on its field and stores nothing; the secret is never shown", async () => {
    await page.click(`${alerts} button:has-text("New receiver")`)
    await page.fill('input[name="receiverName"]', "Ops webhook")
    await page.fill('input[name="receiverUrl"]', "ftp://127.0.0.1/hook")
    await page.fill('input[name="receiverSecret"]', secret)
    await page.click('button:has-text("Create receiver")')
    await until(page, `${q(fieldMessage("receiverUrl"))} !== null`, 10_000)
    expect(await text(page, fieldMessage("receiverUrl"))).not.toBe("")
    expect(await page.locator(fieldMessage("receiverName")).count()).toBe(0)
    expect(await storedReceivers()).toEqual([])

    await page.fill('input[name="receiverUrl"]', receiverUrl)
    // Editing the field clears its message.
    expect(await page.locator(fieldMessage("receiverUrl")).count()).toBe(0)
    await page.click('button:has-text("Create receiver")')
    await until(page, `${q(`${alerts} .cw-receivers tbody tr`)} !== null`, 10_000)
    const [r] = await storedReceivers()
    expect(r).toMatchObject({ name: "Ops webhook", url: receiverUrl, hasSecret: true })
    receiverId = r!.id
    const cells = await page
      .locator(`${receiverRow(receiverId)} td`)
      .evaluateAll((tds) => tds.map((td) => td.textContent!.trim()))
    expect(cells.slice(0, 4)).toEqual(["Ops webhook", "webhook", receiverUrl, "has secret"])
    expect(await page.content()).not.toContain(secret)
    expect(await page.locator('input[name="receiverName"]').count()).toBe(0)
  })

  it("sends a test notification and shows the receiver's status, or why it could not be reached", async () => {
    await page.click(`${receiverRow(receiverId)} button:has-text("Send a test notification")`)
    await until(page, `${q(`${receiverRow(receiverId)} .cw-test-result`)} !== null`, 20_000)
    expect(await text(page, `${receiverRow(receiverId)} .cw-test-result`)).toBe("The receiver answered 202.")
    expect(received).toHaveLength(1)
    expect(received[0]!.headers["x-dashstream-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/)
    expect(JSON.parse(received[0]!.body).rule.name).toBe("Dashstream test notification")

    const closed = await suite.api.admin("POST", `${accountPath()}/receivers`, {
      name: "Gone",
      kind: "webhook",
      url: closedUrl
    })
    expect(closed.status, closed.text).toBe(201)
    await openAccount()
    const row = receiverRow(closed.json.id as string)
    await until(page, `${q(row)} !== null`, 10_000)
    await page.click(`${row} button:has-text("Send a test notification")`)
    await until(page, `${q(`${row} .cw-test-result`)} !== null`, 20_000)
    expect(await text(page, `${row} .cw-test-result`)).toContain("connection refused")
    await page.click(`${row} button:has-text("Delete")`)
    await page.click(`${row} button:has-text("Delete receiver")`)
    await until(page, `${q(row)} === null`, 10_000)
    expect((await storedReceivers()).map((x) => x.id)).toEqual([receiverId])
  })

  it("creates a rule: stream and receivers picked; a refused condition is shown on its field and stores nothing", async () => {
    await page.click(`${alerts} button:has-text("New rule")`)
    await page.fill('input[name="ruleName"]', longName)
    await page.selectOption('select[name="ruleStream"]', longName)
    await page.selectOption('select[name="conditionKind"]', "noDataFor")
    await page.fill('input[name="conditionValue"]', "5")
    await page.fill('input[name="ruleFor"]', "60")
    await page.check(`input[name="ruleReceiver"][value="${receiverId}"]`)
    await page.click('button:has-text("Create rule")')
    await until(page, `${q(fieldMessage("conditionValue"))} !== null`, 10_000)
    expect(await page.locator(fieldMessage("ruleFor")).count()).toBe(0)
    expect(await storedRules()).toHaveLength(1)

    await page.fill('input[name="conditionValue"]', "300")
    await page.click('button:has-text("Create rule")')
    await until(
      page,
      `document.querySelectorAll(${JSON.stringify(`${alerts} .cw-alert-rules tbody tr`)}).length === 2`,
      10_000
    )
    const rule = (await storedRules()).find((r) => r.name === longName)!
    expect(rule).toMatchObject({
      streamName: longName,
      condition: { noDataFor: 300 },
      for: 60,
      receiverIds: [receiverId]
    })
    ruleId = rule.id
    const cells = await page
      .locator(`${ruleRow(ruleId)} td`)
      .evaluateAll((tds) => tds.map((td) => td.textContent!.trim()))
    expect(cells.slice(0, 4)).toEqual([longName, longName, "no data for 5 min", "1 min"])
    expect(cells[5]).toBe("Ops webhook")
  })

  it("edits a rule: a refused for is shown on its field; the change is stored", async () => {
    await page.click(`${ruleRow(ruleId)} button:has-text("Edit")`)
    expect(await page.inputValue('input[name="conditionValue"]')).toBe("300")
    await page.fill('input[name="ruleFor"]', "100000")
    await page.click('button:has-text("Save rule")')
    await until(page, `${q(fieldMessage("ruleFor"))} !== null`, 10_000)
    expect((await storedRules()).find((r) => r.id === ruleId)!.for).toBe(60)
    await page.fill('input[name="ruleFor"]', "120")
    await page.click('button:has-text("Save rule")')
    await until(page, `${q('input[name="ruleFor"]')} === null`, 10_000)
    expect((await storedRules()).find((r) => r.id === ruleId)!.for).toBe(120)
    await until(page, `${q(`${ruleRow(ruleId)} td:nth-child(4)`)}?.textContent.trim() === "2 min"`, 10_000)
  })

  it("edits a receiver: its secret is kept, then removed", async () => {
    await page.click(`${receiverRow(receiverId)} button:has-text("Edit")`)
    expect(await page.isChecked('input[name="secretAction"][value="keep"]')).toBe(true)
    await page.fill('input[name="receiverName"]', "Ops hook")
    await page.click('button:has-text("Save receiver")')
    await until(page, `${q('input[name="receiverName"]')} === null`, 10_000)
    expect((await storedReceivers())[0]).toMatchObject({ name: "Ops hook", hasSecret: true })

    await page.click(`${receiverRow(receiverId)} button:has-text("Edit")`)
    await page.check('input[name="secretAction"][value="remove"]')
    await page.click('button:has-text("Save receiver")')
    await until(page, `${q('input[name="receiverName"]')} === null`, 10_000)
    expect((await storedReceivers())[0]).toMatchObject({ name: "Ops hook", hasSecret: false })
    await until(page, `${q(`${receiverRow(receiverId)} td:nth-child(4)`)}?.textContent.trim() === "none"`, 10_000)
  })

  it("silences a rule for an hour and lifts the silence", async () => {
    const before = Date.now()
    await page.click(`${ruleRow(ruleId)} button:has-text("Silence…")`)
    await page.click(`${ruleRow(ruleId)} button:has-text("1 h")`)
    await until(page, `${q(`${ruleRow(ruleId)} .cw-silenced`)} !== null`, 10_000)
    const until1 = Date.parse((await storedRules()).find((r) => r.id === ruleId)!.silencedUntil!)
    expect(until1).toBeGreaterThanOrEqual(before + 3600_000 - 1000)
    expect(until1).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000)
    expect(await text(page, `${ruleRow(ruleId)} .cw-silenced`)).toContain("silenced until")

    await page.click(`${ruleRow(ruleId)} button:has-text("Lift silence")`)
    await until(page, `${q(`${ruleRow(ruleId)} .cw-silenced`)} === null`, 10_000)
    expect((await storedRules()).find((r) => r.id === ruleId)!.silencedUntil).toBeNull()
  })

  it("lists a rule as firing, in the alert colour, after a crossing push", async () => {
    const r = await suite.api.pushPoint(accessKey, "cpu", { number: 95 })
    expect(r.status, r.text).toBe(200)
    // The page reads the rules again every 5 s.
    await until(page, `${q(`${ruleRow(hotRuleId)} .cw-state`)}?.dataset.state === "firing"`, 30_000)
    const colours = (await page.evaluate(`({
      state: getComputedStyle(${q(`${ruleRow(hotRuleId)} .cw-state`)}).color,
      alert: (() => { const s = document.createElement("span"); s.style.color = "var(--down)"; document.body.append(s);
        const c = getComputedStyle(s).color; s.remove(); return c })()
    })`)) as { state: string; alert: string }
    expect(colours.state).toBe(colours.alert)
  })

  for (const width of [1280, 1920]) {
    it(`shows the alerts with a long name and no horizontal scrollbar at ${width} px`, async () => {
      await page.setViewportSize({ width, height: 900 })
      await openAccount()
      await until(page, `${q(ruleRow(ruleId))} !== null`, 10_000)
      await page.click(`${ruleRow(ruleId)} button:has-text("Silence…")`)
      await page.click(`${ruleRow(ruleId)} button:has-text("Edit")`)
      const b = (await page.evaluate(`({ pageWidth: document.documentElement.scrollWidth, viewport: innerWidth,
        outside: [...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > innerWidth + 0.5)
          .map((e) => e.tagName.toLowerCase() + "." + [...e.classList].join(".")).slice(-3) })`)) as {
        pageWidth: number
        viewport: number
        outside: Array<string>
      }
      expect(b.pageWidth, `horizontal scrollbar: ${b.outside.join(", ")}`).toBeLessThanOrEqual(b.viewport)
    })
  }

  it("deletes the rule and the receiver after a confirmation", async () => {
    await openAccount()
    await page.click(`${ruleRow(ruleId)} button:has-text("Delete")`)
    expect(await text(page, `${ruleRow(ruleId)} .cw-confirm-question`)).toBe(`Delete the rule ${longName}?`)
    await page.click(`${ruleRow(ruleId)} button:has-text("Delete rule")`)
    await until(page, `${q(ruleRow(ruleId))} === null`, 10_000)
    expect((await storedRules()).map((r) => r.id)).toEqual([hotRuleId])

    await page.click(`${receiverRow(receiverId)} button:has-text("Delete")`)
    await page.click(`${receiverRow(receiverId)} button:has-text("Delete receiver")`)
    await until(page, `${q(alerts)}?.textContent.includes("No receivers yet.") === true`, 10_000)
    expect(await storedReceivers()).toEqual([])
    expect(unexpectedErrors(suite.watch, [400, 401, 502])).toEqual([])
    expect(suite.watch.foreignRequests).toEqual([])
  })
})
