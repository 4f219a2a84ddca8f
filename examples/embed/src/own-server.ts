/**
 * Dashstream's HTTP routes mounted in a Node server of one's own: `GET /hello` is the service's own route, every other
 * request goes to Dashstream (push, export, live updates, dashboards, health, metrics, OpenAPI), with SQLite storage.
 * On start it creates an account, a widget `visits` and a dashboard, and prints the access key and the dashboard's
 * path; it stops on SIGINT or SIGTERM.
 *
 * Usage: node dist/own-server.js [database file] [port]   (defaults: own-server.db, 8080; port 0 picks a free one)
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Dashboards, defaultLimits, UseCases } from "@dashstream/core"
import * as DashstreamHttp from "@dashstream/http"
import * as Sqlite from "@dashstream/storage-sqlite"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect } from "effect"

const filename = process.argv[2] ?? "own-server.db"
const port = Number(process.argv[3] ?? 8080)

const program = Effect.gen(function* () {
  const account = yield* UseCases.createAccount("own server")
  yield* UseCases.createWidget(account.id, "visits", "number")
  const { viewToken } = yield* Dashboards.createDashboard(account.id, { name: "Visits" })

  // Dashstream's routes as Node request listeners; its live event streams end when this scope closes.
  const dashstream = yield* DashstreamHttp.handler({
    adminToken: undefined, // no admin API
    limits: defaultLimits,
    rateLimit: undefined,
    logRequests: false
  })

  const server = yield* Effect.acquireRelease(
    Effect.sync(() =>
      createServer((req, res) => {
        if (req.method === "GET" && req.url === "/hello") {
          res.writeHead(200, { "content-type": "text/plain" }).end("hello from my own service\n")
          return
        }
        dashstream.handle(req, res)
      }).on("clientError", dashstream.clientError)
    ),
    (server) =>
      Effect.async<void>((resume) => {
        dashstream.endEventStreams()
        server.close(() => resume(Effect.void))
        server.closeIdleConnections()
      })
  )
  yield* Effect.async<void>((resume) => void server.listen(port, "127.0.0.1", () => resume(Effect.void)))

  console.log(`access key: ${account.accessKey}`)
  console.log(`dashboard: /d/${viewToken}`)
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`)
  return yield* Effect.never
})

// runMain interrupts the program on SIGINT/SIGTERM: the server closes, then the SQLite file.
NodeRuntime.runMain(program.pipe(Effect.scoped, Effect.provide(Sqlite.layer({ filename }))))
