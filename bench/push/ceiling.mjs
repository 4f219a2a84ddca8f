// The ceiling of one Node process: a bare node:http server that reads a JSON POST, parses it and answers 200.
// Run: node bench/push/ceiling.ts <port>   (plain JavaScript semantics; no TypeScript-only syntax below)
import { createServer } from "node:http"

const port = Number(process.argv[2] ?? 8090)
const ok = Buffer.from('{"message":"Success!"}')
createServer((req, res) => {
  const chunks = []
  req.on("data", (c) => chunks.push(c))
  req.on("end", () => {
    try {
      JSON.parse(Buffer.concat(chunks).toString("utf8"))
      res.writeHead(200, { "content-type": "application/json", "content-length": ok.length })
      res.end(ok)
    } catch {
      res.writeHead(400)
      res.end()
    }
  })
}).listen(port, "127.0.0.1")
