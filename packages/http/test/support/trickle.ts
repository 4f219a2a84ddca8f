import { connect } from "node:net"
import { assert } from "@effect/vitest"

/** A client that sends a request slowly, over a real socket, to test the request timeout (`serve --request-timeout`). */

/** What a trickling client saw: the bytes received, whether the server closed, and when (ms after connecting). */
export interface Trickled {
  readonly received: string
  readonly closedByServer: boolean
  readonly ms: number
}

/**
 * Connects to `port`, writes `head`, then one byte of `body` every `everyMs` until the server closes the connection
 * or `limitMs` have passed (then the client gives up and closes it).
 */
export const trickle = (
  port: number,
  head: string,
  body: string,
  everyMs: number,
  limitMs: number
): Promise<Trickled> =>
  new Promise((resolve, reject) => {
    const start = performance.now()
    const socket = connect(port, "127.0.0.1")
    let received = ""
    let sent = 0
    let closedByServer = true
    const timer = setInterval(() => {
      if (sent < body.length && socket.writable) socket.write(body[sent++]!)
    }, everyMs)
    const giveUp = setTimeout(() => {
      closedByServer = false
      socket.destroy()
    }, limitMs)
    socket.on("data", (d) => (received += d.toString("latin1")))
    // The server may close while a byte is in flight: a reset is a close too.
    socket.on("error", (error: Error & { code?: string }) => {
      if (error.code !== "ECONNRESET" && error.code !== "EPIPE") reject(error)
    })
    socket.on("close", () => {
      clearInterval(timer)
      clearTimeout(giveUp)
      resolve({ received, closedByServer, ms: performance.now() - start })
    })
    socket.write(head)
  })

/** Asserts `answer` is one 408 with the JSON error body of `request_timeout` and `Connection: close`. */
export const assertTimedOut = (answer: Trickled, timeoutMs: number) => {
  assert.isTrue(answer.closedByServer, `the server kept the connection open; received ${answer.received}`)
  assert.match(answer.received, /^HTTP\/1\.1 408 Request Timeout\r\n/)
  assert.match(answer.received, /\r\nconnection: close\r\n/i)
  const body = JSON.parse(answer.received.slice(answer.received.indexOf("\r\n\r\n") + 4))
  assert.strictEqual(body.error.code, "request_timeout")
  assert.isAtLeast(answer.ms, timeoutMs - 50)
  assert.isBelow(answer.ms, timeoutMs + 1_500)
}
