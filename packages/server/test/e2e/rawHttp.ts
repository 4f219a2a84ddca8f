/**
 * Raw HTTP for the end-to-end suites (exact header replay, framing errors): requests that `fetch` cannot make, sent
 * with node:http or as bytes on a TCP connection. Re-exported by `harness.ts`.
 */
import { request as httpRequest } from "node:http"
import { connect } from "node:net"

/** A response read with node:http, for requests fetch cannot make (exact headers, Expect, chunked). */
export interface RawReply {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly text: string
  /** With `expectContinue`: whether the server answered `100 Continue` before the body was sent. */
  readonly continued: boolean
}

/**
 * Sends one request with node:http and exactly the given headers (no defaults beyond Host unless
 * `headers` names them). `expectContinue` waits for `100 Continue` before sending the body, and like libcurl
 * sends it anyway after a second without one.
 * `chunks` sends the body in pieces with chunked transfer encoding.
 */
export const nodeRequest = (
  baseUrl: string,
  options: {
    readonly method: string
    readonly path: string
    readonly headers: Readonly<Record<string, string>>
    readonly body?: string | Buffer
    readonly expectContinue?: boolean
    readonly chunks?: ReadonlyArray<Buffer>
  }
): Promise<RawReply> =>
  new Promise((resolveReply, rejectReply) => {
    const url = new URL(baseUrl)
    const req = httpRequest({
      host: url.hostname,
      port: Number(url.port),
      method: options.method,
      path: options.path,
      headers: options.headers,
      agent: false
    })
    let continued = false
    req.on("error", rejectReply)
    req.on("response", (res) => {
      const parts: Array<Buffer> = []
      res.on("data", (d: Buffer) => parts.push(d))
      res.on("end", () =>
        resolveReply({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(parts).toString(),
          continued
        })
      )
      res.on("error", rejectReply)
    })
    if (options.chunks !== undefined) {
      for (const chunk of options.chunks) req.write(chunk)
      req.end()
    } else if (options.expectContinue === true) {
      let sent = false
      const send = () => {
        if (sent) return
        sent = true
        req.end(options.body)
      }
      const timer = setTimeout(send, 1_000)
      req.on("continue", () => {
        continued = true
        clearTimeout(timer)
        send()
      })
    } else {
      req.end(options.body)
    }
  })

/**
 * Writes raw bytes to a fresh TCP connection and collects everything the server sends until it closes the
 * connection (or `timeoutMs` passes). Returns the bytes received and whether the server closed it.
 */
export const rawExchange = (
  baseUrl: string,
  bytes: Buffer,
  timeoutMs = 5_000
): Promise<{ readonly received: string; readonly closedByServer: boolean }> =>
  new Promise((resolveExchange) => {
    const url = new URL(baseUrl)
    const socket = connect({ host: url.hostname, port: Number(url.port) })
    const parts: Array<Buffer> = []
    let done = false
    const finish = (closedByServer: boolean) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolveExchange({ received: Buffer.concat(parts).toString("latin1"), closedByServer })
    }
    const timer = setTimeout(() => finish(false), timeoutMs)
    socket.on("data", (d: Buffer) => parts.push(d))
    socket.on("end", () => finish(true))
    socket.on("close", () => finish(true))
    socket.on("error", () => finish(true))
    socket.on("connect", () => socket.write(bytes))
  })
