// The ceiling of one Node process: a bare node:http server that reads a request and answers it. A JSON body is parsed
// and answered 200; any other body (the line protocol loads' `text/plain`) is decoded as UTF-8 text, as a server
// must before it parses it, and answered 204, as InfluxDB's `/write` answers; a GET (the latest reads) is answered
// 200 with a small JSON.
// Run: node bench/push/ceiling.mjs <port>   (plain JavaScript semantics; no TypeScript-only syntax below)
import { createServer } from "node:http"

const port = Number(process.argv[2] ?? 8090)
const ok = Buffer.from('{"message":"Success!"}')
createServer((req, res) => {
  const chunks = []
  req.on("data", (c) => chunks.push(c))
  req.on("end", () => {
    const body = Buffer.concat(chunks)
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json", "content-length": ok.length })
      res.end(ok)
      return
    }
    if (!(req.headers["content-type"] ?? "").startsWith("application/json")) {
      if (body.toString("utf8").length === 0) res.writeHead(400)
      else res.writeHead(204)
      res.end()
      return
    }
    try {
      JSON.parse(body.toString("utf8"))
      res.writeHead(200, { "content-type": "application/json", "content-length": ok.length })
      res.end(ok)
    } catch {
      res.writeHead(400)
      res.end()
    }
  })
}).listen(port, "127.0.0.1")
