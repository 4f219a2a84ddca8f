import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { assertOneLineError, assertUsageError, timeout } from "./cliSuite.js"
import { cli } from "./support.js"

/**
 * The `alerts rules` and `alerts receivers` commands (docs/api.md sections 8 and 18) against one kind of database
 * (run by CliSqlite.test.ts and CliPostgres.test.ts). A test notification goes to a receiver on loopback.
 */
export const alertsCliSuite = (
  name: string,
  makeDatabase: () => Promise<{ readonly url: string; readonly cleanup: () => Promise<void> }>
) =>
  describe(`${name}: alerts commands`, { timeout }, () => {
    let database: { readonly url: string; readonly cleanup: () => Promise<void> } | undefined
    let accessKey = ""
    const bodies: Array<string> = []
    const receiver = createServer((req, res) => {
      let body = ""
      req.on("data", (c: Buffer) => (body += c.toString()))
      req.on("end", () => {
        bodies.push(body)
        res.statusCode = 204
        res.end()
      })
    })
    let receiverUrl = ""
    let closedUrl = ""

    const run = (...args: ReadonlyArray<string>) =>
      cli(["alerts", ...args, "--access-key", accessKey, "--db", database!.url])

    beforeAll(async () => {
      database = await makeDatabase()
      const account = await cli(["accounts", "create", "--json", "--db", database.url])
      assert.strictEqual(account.code, 0, account.stderr)
      accessKey = JSON.parse(account.stdout).accessKey
      for (const [stream, type] of [
        ["cpu", "number"],
        ["log", "text-feed"]
      ]) {
        const made = await cli([
          "widgets",
          "create",
          "--access-key",
          accessKey,
          "--stream",
          stream!,
          "--type",
          type!,
          "--db",
          database.url
        ])
        assert.strictEqual(made.code, 0, made.stderr)
      }
      await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
      receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
      const closed = createServer()
      await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
      closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/hook`
      await new Promise<void>((resolve) => closed.close(() => resolve()))
    }, timeout)
    afterAll(async () => {
      await new Promise<void>((resolve) => receiver.close(() => resolve()))
      await database?.cleanup()
    })

    it("receivers create, list, test (any status; none is exit 1) and delete; bad flags exit 2", async () => {
      const created = await run(
        "receivers",
        "create",
        "--name",
        "ops",
        "--kind",
        "webhook",
        "--url",
        receiverUrl,
        "--secret",
        "s3cret",
        "--json"
      )
      assert.strictEqual(created.code, 0, created.stderr)
      const r = JSON.parse(created.stdout)
      assert.deepStrictEqual([r.name, r.kind, r.url, r.hasSecret], ["ops", "webhook", receiverUrl, true])
      assert.notInclude(created.stdout, "s3cret")

      const plain = await run("receivers", "create", "--name", "chat", "--kind", "slack", "--url", closedUrl)
      assert.strictEqual(plain.code, 0, plain.stderr)
      assert.match(plain.stdout, /^Created slack receiver "chat" with id [0-9a-f-]{36}\.\n$/)
      const chat = /with id ([0-9a-f-]{36})/.exec(plain.stdout)![1]!

      const listed = await run("receivers", "list", "--json")
      assert.deepStrictEqual(
        JSON.parse(listed.stdout).receivers.map((x: any) => [x.name, x.hasSecret]),
        [
          ["ops", true],
          ["chat", false]
        ]
      )
      const table = await run("receivers", "list")
      assert.match(table.stdout, /^ID +NAME +KIND +SECRET +CREATED +URL\n/)

      const tested = await run("receivers", "test", "--id", r.id)
      assert.strictEqual(tested.code, 0, tested.stderr)
      assert.strictEqual(tested.stdout, "Sent a test notification; the receiver answered HTTP 204.\n")
      assert.strictEqual(JSON.parse(bodies.at(-1)!).rule.name, "Dashstream test notification")
      assert.deepStrictEqual(JSON.parse((await run("receivers", "test", "--id", r.id, "--json")).stdout), {
        status: 204
      })
      const unreachable = await run("receivers", "test", "--id", chat)
      assert.strictEqual(unreachable.code, 1)
      assertOneLineError(unreachable, /could not be reached: connection refused/)

      assertUsageError(
        await run("receivers", "create", "--name", "x", "--kind", "email", "--url", receiverUrl),
        /--kind: kind must be one of webhook, slack, alertmanager/
      )
      assertUsageError(
        await run("receivers", "create", "--name", "x", "--kind", "slack", "--url", "ftp://x"),
        /--url: /
      )
      assertUsageError(await run("receivers", "create", "--name", "x", "--kind", "slack"), /needs --url/)

      const deleted = await run("receivers", "delete", "--id", chat)
      assert.strictEqual(deleted.code, 0, deleted.stderr)
      const again = await run("receivers", "delete", "--id", chat)
      assert.strictEqual(again.code, 1)
      assertOneLineError(again, /no receiver with id/)
    })

    it("rules create (repeatable --receiver), list, delete; flags the rules refuse exit 2 naming the flag", async () => {
      const ids: Array<string> = []
      for (const n of ["a", "b"]) {
        const made = await run(
          "receivers",
          "create",
          "--name",
          n,
          "--kind",
          "alertmanager",
          "--url",
          receiverUrl,
          "--json"
        )
        ids.push(JSON.parse(made.stdout).id)
      }
      const created = await run(
        "rules",
        "create",
        "--name",
        "CPU high",
        "--stream",
        "cpu",
        "--above",
        "90",
        "--for",
        "60",
        "--receiver",
        ids[0]!,
        "--receiver",
        ids[1]!
      )
      assert.strictEqual(created.code, 0, created.stderr)
      assert.match(
        created.stdout,
        /^Created alert rule "CPU high" with id [0-9a-f-]{36}: cpu above 90 for 60 s, notifying 2 receivers\.\n$/
      )
      const json = await run("rules", "create", "--name", "quiet", "--stream", "log", "--no-data-for", "600", "--json")
      assert.strictEqual(json.code, 0, json.stderr)
      const quiet = JSON.parse(json.stdout)
      assert.deepStrictEqual(
        [quiet.condition, quiet.for, quiet.receiverIds, quiet.state],
        [{ noDataFor: 600 }, 0, [], "ok"]
      )

      const listed = JSON.parse((await run("rules", "list", "--json")).stdout).rules
      assert.deepStrictEqual(
        listed.map((x: any) => [x.name, x.condition, x.receiverIds]),
        [
          ["CPU high", { above: 90 }, ids],
          ["quiet", { noDataFor: 600 }, []]
        ]
      )
      assert.match(
        (await run("rules", "list")).stdout,
        /^ID +NAME +STREAM +CONDITION +FOR +STATE +SINCE\n.*CPU high +cpu +above 90 +60s +ok /
      )

      assertUsageError(
        await run("rules", "create", "--name", "x", "--stream", "log", "--above", "1"),
        /--above, --below or --no-data-for: above compares numbers/
      )
      assertUsageError(
        await run("rules", "create", "--name", "x", "--stream", "cpu"),
        /--above, --below or --no-data-for: /
      )
      assertUsageError(
        await run(
          "rules",
          "create",
          "--name",
          "x",
          "--stream",
          "cpu",
          "--below",
          "1",
          "--receiver",
          ids[0]!,
          "--receiver",
          "nope"
        ),
        /--receiver: no receiver with id "nope"/
      )
      assertUsageError(
        await run("rules", "create", "--name", "x", "--stream", "nope", "--below", "1"),
        /--stream: no widget/
      )
      assertUsageError(
        await run("rules", "create", "--name", "x", "--stream", "cpu", "--below", "1", "--for", "1.5"),
        /--for: /
      )
      assertUsageError(
        await cli(["alerts", "rules", "--db", database!.url]),
        /"alerts rules" needs a subcommand; use alerts rules create or alerts rules list or alerts rules delete/
      )

      assert.strictEqual((await run("rules", "delete", "--id", quiet.id)).code, 0)
      const again = await run("rules", "delete", "--id", quiet.id)
      assert.strictEqual(again.code, 1)
      assertOneLineError(again, /no alert rule with id/)
      const stranger = await cli(["alerts", "rules", "list", "--access-key", "ds_unknown", "--db", database!.url])
      assert.strictEqual(stranger.code, 1)
      assertOneLineError(stranger, /access key is unknown/)
    })
  })
