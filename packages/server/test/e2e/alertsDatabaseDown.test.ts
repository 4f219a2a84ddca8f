/**
 * docs/api.md section 18 when PostgreSQL stops answering as alerts start: `dashstream serve` reaches its database
 * through a TCP forwarder on loopback that goes down (every connection cut, new ones refused) the moment the alert
 * deliverer opens its lease-owner connection, right after the server migrated and started listening. The server
 * finishes its start all the same (its first-start hint is printed), logs that alerts wait for the database, and once
 * the forwarder is up again takes its lease and notifies a webhook of the next crossing push.
 *
 * PostgreSQL only (the shared PostgreSQL is never stopped: the forwarder stands for it).
 */
import { createServer, type Server, Socket } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addRules, eventually, receiverServer } from "./alertSupport.js"
import { Api, backends, type Database, expectSuccess, type RunningServer, startServer, suiteName } from "./harness.js"

/**
 * A TCP forwarder on loopback to `target` that goes down by itself when a client's first bytes (PostgreSQL's startup
 * message) contain `downOn`: then it cuts every connection and refuses new ones until `up()`.
 */
const forwarder = async (target: { host: string; port: number }, downOn: string) => {
  const sockets = new Set<Socket>()
  let down = false
  let armed = true
  let wentDown: () => void = () => {}
  const downed = new Promise<void>((resolve) => (wentDown = resolve))
  const cutAll = () => {
    for (const socket of sockets) socket.destroy()
    sockets.clear()
  }
  const server: Server = createServer((client) => {
    if (down) return client.destroy()
    sockets.add(client)
    const upstream = new Socket()
    sockets.add(upstream)
    let first = true
    client.on("data", (chunk: Buffer) => {
      if (first && armed && chunk.includes(Buffer.from(downOn))) {
        down = true
        cutAll()
        wentDown()
        return
      }
      first = false
      upstream.write(chunk)
    })
    upstream.on("data", (chunk: Buffer) => client.write(chunk))
    for (const [a, b] of [
      [client, upstream],
      [upstream, client]
    ] as const) {
      a.on("error", () => b.destroy())
      a.on("close", () => {
        b.destroy()
        sockets.delete(a)
      })
    }
    upstream.connect(target.port, target.host)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  return {
    port: typeof address === "object" && address !== null ? address.port : 0,
    downed,
    up: () => {
      armed = false
      down = false
    },
    close: () =>
      new Promise<void>((resolve) => {
        cutAll()
        server.close(() => resolve())
      })
  }
}

for (const backend of backends.filter((b) => b.name === "postgres")) {
  describe(suiteName("alerts while the database is down at start", backend), { timeout: 180_000 }, () => {
    let db: Database | undefined
    let server: RunningServer | undefined
    let proxy: Awaited<ReturnType<typeof forwarder>> | undefined
    let hook: Awaited<ReturnType<typeof receiverServer>> | undefined

    beforeAll(async () => {
      db = await backend.database()
      hook = await receiverServer([200])
    }, 120_000)

    afterAll(async () => {
      await server?.stop()
      await proxy?.close()
      await hook?.close()
      await db?.drop()
    }, 60_000)

    it("serve starts, logs that alerts wait, and takes its lease when PostgreSQL answers again", async () => {
      const url = new URL(db!.url)
      // The deliverer's lease owner connects with `application_name` dashstream-alerts (its own connection).
      proxy = await forwarder({ host: url.hostname, port: Number(url.port || 5432) }, "dashstream-alerts")
      const viaProxy = new URL(db!.url)
      viaProxy.port = String(proxy.port)
      server = await startServer(viaProxy.toString())
      await proxy.downed
      // The start went on: the empty database's hint is printed after alerts are started.
      await eventually(() => {
        expect(server!.output()).toContain("alerts wait for the database")
        expect(server!.stdout()).toMatch(/accounts create/)
      }, 20_000)
      expect(server.output()).not.toContain("alert engine and deliverer started")

      proxy.up()
      await eventually(() => expect(server!.output()).toContain("alert engine and deliverer started"), 30_000)
      const api = new Api(server.baseUrl)
      const account = await api.setup({ cpu: "number" })
      await addRules(db!.url, account, [
        { name: "CPU hot", stream: "cpu", condition: { above: 90 }, webhooks: [hook!.url] }
      ])
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      expectSuccess(await api.pushPoint(account.accessKey, "cpu", 95))
      await eventually(() => expect(hook!.received).toHaveLength(1), 10_000)
      expect(JSON.parse(hook!.received[0]!.body.toString())).toMatchObject({ state: "firing", value: 95 })
    })
  })
}
