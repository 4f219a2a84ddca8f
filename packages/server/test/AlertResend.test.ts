/**
 * docs/api.md section 18, "re-sent every 60 seconds while firing", with two processes on one PostgreSQL database:
 * each runs a deliverer (the one `serve` starts, with the server's HTTP sender), and a firing rule's Alertmanager
 * receiver, a loopback server, gets one re-send per interval from the deployment, not one per process. The interval
 * is shortened to one second through the deliverer's internal option.
 */
import { createServer } from "node:http"
import { initialEvaluation, makeAlertDeliverer, micros } from "@dashstream/core"
import { AlertFixtures } from "@dashstream/core/testing"
import { layer, migrate, parseUrl } from "@dashstream/storage-postgres"
import { openTestDatabase, withSchema } from "@dashstream/storage-postgres/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NotificationSender from "../src/NotificationSender.js"

const db = await openTestDatabase()
afterAll(() => db.close())

/** A loopback Alertmanager stand-in: records when each `POST /api/v2/alerts` came and its alerts. */
const alertmanager = () =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const posts: Array<{ readonly at: number; readonly alerts: Array<Record<string, unknown>> }> = []
      const server = createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          if (req.method === "POST" && req.url === "/api/v2/alerts") {
            posts.push({ at: Date.now(), alerts: JSON.parse(Buffer.concat(chunks).toString()) })
          }
          res.statusCode = 200
          res.end()
        })
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      return { posts, url: `http://127.0.0.1:${port}`, server }
    }),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

describe("Alertmanager re-sends with two processes on one PostgreSQL database", () => {
  it.scopedLive(
    "a firing rule is re-sent once per interval by the deployment, not once per process",
    () =>
      Effect.gen(function* () {
        const config = yield* parseUrl(withSchema(db.url, `resend_${Math.random().toString(36).slice(2, 10)}`))
        yield* migrate(config)
        const processes = [yield* Layer.build(layer(config)), yield* Layer.build(layer(config))]
        const receiver = yield* alertmanager()

        // Firing for two minutes already: its first re-send is due at once.
        const since = micros(Date.now() * 1000 - 120_000_000)
        const { newAccount, newReceiver, newRule, newWidget } = AlertFixtures
        const rule = yield* Effect.provide(
          Effect.gen(function* () {
            const account = yield* newAccount()
            const am = yield* newReceiver(account, "am", null, "alertmanager", since, receiver.url)
            const created = yield* newRule(yield* newWidget(account, "cpu"), [am], {
              condition: { above: 90 },
              for: 0,
              createdAt: since,
              evaluation: { ...initialEvaluation(since, null), state: "firing", value: 95 }
            })
            return created.id
          }),
          processes[0]!
        )

        const started = Date.now()
        const elapsed = yield* Effect.scoped(
          Effect.gen(function* () {
            for (const stores of processes) {
              yield* makeAlertDeliverer({ alertmanagerResendEvery: "1 second" }).pipe(
                Effect.provide(NotificationSender.layer),
                Effect.provide(stores)
              )
            }
            yield* Effect.sleep("6500 millis")
            return Date.now() - started
          })
        )
        // Let a request sent as the deliverers stopped arrive.
        yield* Effect.sleep("500 millis")

        const posts = receiver.posts
        // At most one re-send per second of the deployment (two per second if each process re-sent it).
        assert.isAtMost(posts.length, Math.floor(elapsed / 1000) + 1, JSON.stringify(posts.map((p) => p.at - started)))
        assert.isAtLeast(posts.length, 3)
        for (const post of posts) {
          assert.strictEqual(post.alerts.length, 1)
          const [alert] = post.alerts as Array<{ labels: Record<string, string>; startsAt: string }>
          assert.strictEqual(alert!.labels["dashstream_rule"], rule)
          assert.strictEqual(alert!.startsAt, new Date(since / 1000).toISOString())
        }
      }),
    60_000
  )
})
