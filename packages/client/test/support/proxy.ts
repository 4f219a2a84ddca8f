import { createServer, connect, type Server, type Socket } from "node:net"

/**
 * A tiny TCP proxy on 127.0.0.1 in front of the server, to make the network fail the way it does in real life:
 * - `reset`: the request is forwarded (the server stores it), then the client's connection is reset (RST) when the
 *   answer comes back, so the client cannot know whether it was stored;
 * - `hold`: the request is forwarded and the answer is never passed on (a timeout);
 * - `unavailable`: answers 503 `unavailable` with `Retry-After: 1` itself, forwarding nothing (nothing is stored);
 * - `bad-gateway`: the request is forwarded (the server stores it), and the client gets a 502 instead of the answer;
 * - `cut-after-retry`: an event stream's answer is passed on up to the end of its `retry:` line, then the connection
 *   is cut (dropped after the stream started, before its first event);
 * - `dropAll()`: cuts every open connection (an event stream loses its connection mid-way).
 * Faults apply to the next `n` requests (a request starts with a chunk beginning with an HTTP method).
 */
export interface Proxy {
  readonly url: string
  /** Requests seen, by start line (`POST /customSend`), in order. */
  readonly requests: Array<string>
  /** The first chunk of each request (start line and headers), in order. */
  readonly heads: Array<string>
  /** Makes the next `n` requests fail with `mode`. */
  readonly fail: (mode: Fault, n?: number) => void
  /** Destroys every open connection. */
  readonly dropAll: () => void
  /** The number of open client connections whose last request's start line contains `text` (any when absent). */
  readonly open: (text?: string) => number
  readonly close: () => Promise<void>
}

/** How a request is made to fail. */
export type Fault = "reset" | "hold" | "unavailable" | "bad-gateway" | "cut-after-retry"

const unavailable =
  "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\n" +
  'content-length: 72\r\n\r\n{"error":{"code":"unavailable","message":"storage unreachable; retry."}}'
const badGateway =
  "HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\nconnection: close\r\ncontent-length: 11\r\n\r\nbad gateway"

/** Starts a proxy to `127.0.0.1:targetPort`. */
export const startProxy = async (targetPort: number): Promise<Proxy> => {
  const requests: Array<string> = []
  const heads: Array<string> = []
  const sockets = new Set<Socket>()
  const lastRequest = new Map<Socket, string>()
  let faults: Array<Fault> = []
  const server: Server = createServer((client) => {
    sockets.add(client)
    let current: "pass" | Fault = "pass"
    const upstream = connect(targetPort, "127.0.0.1")
    const destroyBoth = () => {
      client.destroy()
      upstream.destroy()
    }
    client.on("data", (chunk: Buffer) => {
      const text = chunk.toString("latin1")
      const start = /^(GET|POST|PUT|DELETE|HEAD|OPTIONS) (\S+)/.exec(text)
      if (start !== null) {
        requests.push(`${start[1]} ${start[2]}`)
        lastRequest.set(client, `${start[1]} ${start[2]}`)
        heads.push(text.split("\r\n\r\n")[0]!)
        current = faults.shift() ?? "pass"
        if (current === "unavailable") return void client.end(unavailable)
      }
      if (current !== "unavailable") upstream.write(chunk)
    })
    let answered = ""
    upstream.on("data", (chunk: Buffer) => {
      if (current === "cut-after-retry") {
        answered += chunk.toString("latin1")
        const retry = answered.indexOf("retry:")
        const end = retry === -1 ? -1 : answered.indexOf("\n\n", retry)
        if (end === -1) return void client.write(chunk)
        // The bytes of this chunk up to the blank line that ends the retry line, then nothing more.
        const kept = chunk.length - (answered.length - (end + 2))
        client.write(chunk.subarray(0, kept), () => destroyBoth())
        current = "hold"
        return
      }
      if (current === "reset") {
        client.resetAndDestroy()
        upstream.destroy()
      } else if (current === "bad-gateway") {
        client.end(badGateway)
        upstream.destroy()
      } else if (current === "pass") client.write(chunk)
    })
    client.on("end", () => upstream.end())
    upstream.on("end", () => client.end())
    client.on("error", destroyBoth)
    upstream.on("error", destroyBoth)
    client.on("close", () => {
      sockets.delete(client)
      lastRequest.delete(client)
      upstream.destroy()
    })
    upstream.on("close", () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("proxy has no port")
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    heads,
    fail: (mode, n = 1) => {
      faults = [...faults, ...Array.from({ length: n }, () => mode)]
    },
    dropAll: () => {
      for (const s of sockets) s.destroy()
    },
    open: (text) => [...sockets].filter((s) => text === undefined || (lastRequest.get(s) ?? "").includes(text)).length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      })
  }
}
