import http from "node:http"
const base = "http://127.0.0.1:18812"
const post = async (path, body, headers = {}) => { const r = await fetch(base + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }); return r.json() }
const acc = await post("/admin/accounts", {}, { authorization: "Bearer tok" })
await post(`/admin/accounts/${acc.id}/widgets`, { streamName: "t", type: "number" }, { authorization: "Bearer tok" })
const subs = []
for (let i = 0; i < 6; i++) {
  const got = []
  await new Promise((ok) => http.get(base + `/api/v2/${acc.accessKey}/datastream/t/events?since=0`, { agent: false }, (res) => {
    res.setEncoding("utf8"); let buf = ""
    res.on("data", (d) => { buf += d; let k; while ((k = buf.indexOf("\n\n")) >= 0) { const ev = buf.slice(0, k); buf = buf.slice(k + 2); const m = /data: (.*)/.exec(ev); if (m && ev.includes("entry")) got.push(JSON.parse(m[1]).point.number) } ; ok() })
  }))
  subs.push(got)
}
await new Promise((r) => setTimeout(r, 300))
let n = 0
await Promise.all(Array.from({ length: 25 }, async () => { while (n < 200) { n++; await post("/customSend", { accessKey: acc.accessKey, streamName: "t", point: { delta: 1 } }) } }))
await new Promise((r) => setTimeout(r, 2000))
for (const s of subs) { const missing = []; for (let i = 1; i <= 200; i++) if (!s.includes(i)) missing.push(i); console.log(s.length, "missing", missing.join(","), "dups", s.length - new Set(s).size) }
