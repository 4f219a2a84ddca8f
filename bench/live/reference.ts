/**
 * The bare reference server of the live benchmark's fan-out part (`fanout.ts`): what one Node process does at best
 * when it writes each event to each subscriber, with nothing of Dashstream's in the way. Plain `node:http`:
 *
 * - `GET /events/<stream>`: 200 with the live lane's headers (`text/event-stream`, chunked), the `retry:` line, then
 *   every event pushed to `<stream>`;
 * - `POST /customSend` with `{"streamName", "point"}` (the body the benchmark sends Dashstream): 200, then the event
 *   `event: entry\nid: <ts>\ndata: {"ts":<ts>,"point":{"number":<point>}}\n\n`, the framing of Dashstream's stream
 *   event streams, is serialised once (as the HTTP chunk the response would write) and written with one
 *   `socket.write` per subscriber.
 *
 * No storage, no backpressure bound, no heartbeat. Started as `node --import tsx reference.ts <port>`; answers
 * `GET /healthz` once listening.
 */
import { createServer, type ServerResponse } from "node:http"
import type { Socket } from "node:net"

const port = Number(process.argv[2])
const subscribers = new Map<string, Set<Socket>>()
const headers = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-store",
  "x-accel-buffering": "no",
  connection: "keep-alive"
}

// One HTTP/1.1 chunk holding `text`, as `res.write(text)` on a chunked response puts it on the wire.
const chunk = (text: string): Buffer => {
  const body = Buffer.from(text)
  return Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from("\r\n")])
}

const subscribe = (stream: string, res: ServerResponse) => {
  res.writeHead(200, headers)
  res.write("retry: 2000\n\n")
  const socket = res.socket!
  let set = subscribers.get(stream)
  if (set === undefined) subscribers.set(stream, (set = new Set()))
  set.add(socket)
  res.on("close", () => set.delete(socket))
}

// The last `ts` assigned (microseconds): each push gets a greater one, as Dashstream assigns them.
let lastTs = 0

const push = (body: string, res: ServerResponse) => {
  const { streamName, point } = JSON.parse(body) as { streamName: string; point: number }
  const micros = (lastTs = Math.max(lastTs + 1, Date.now() * 1000))
  const ts = `${Math.floor(micros / 1e6)}.${String(micros % 1e6).padStart(6, "0")}`
  res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}')
  const set = subscribers.get(streamName)
  if (set === undefined) return
  const bytes = chunk(`event: entry\nid: ${ts}\ndata: {"ts":${ts},"point":{"number":${point}}}\n\n`)
  for (const socket of set) socket.write(bytes)
}

createServer((req, res) => {
  const url = req.url ?? "/"
  if (req.method === "GET" && url.startsWith("/events/")) return subscribe(url.slice("/events/".length), res)
  if (req.method === "GET" && url === "/healthz") return void res.end("ok")
  if (req.method === "POST" && url === "/customSend") {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (d: string) => (body += d))
    req.on("end", () => push(body, res))
    return
  }
  res.writeHead(404).end()
}).listen(port, "127.0.0.1")
