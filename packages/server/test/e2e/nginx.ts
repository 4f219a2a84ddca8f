/**
 * A real nginx (Debian's, installed by `test/support/nginxSetup.ts`) in front of `dashstream serve`, run with the
 * README's server block (docs/api.md section 16): the test reads the fenced `nginx` block of README.md and changes only
 * its `listen` port and its `proxy_pass` upstream port, so the block the README shows is the block under test.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { nginxPath } from "../support/nginxSetup.js"
import { repoRoot } from "./harness.js"

/** The base path of the README's block (`location /dashboards/`) and of the `serve --base-path` it goes with. */
export const readmeBasePath = "/dashboards"

/**
 * The README's fenced `nginx` block that starts with `what` (`server {` or `upstream`), as written. Throws when there
 * is not exactly one.
 */
const readmeBlock = (what: string): string => {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
  const blocks = [...readme.matchAll(/^```nginx\n([\s\S]*?)^```$/gm)]
    .map((m) => m[1]!)
    .filter((block) => block.startsWith(what))
  if (blocks.length !== 1) throw new Error(`README.md has ${blocks.length} nginx blocks starting "${what}"; expected 1`)
  return blocks[0]!
}

/** The README's fenced `nginx` server block, as written. Throws when there is not exactly one. */
export const readmeNginxBlock = (): string => readmeBlock("server {")

/**
 * The README's `upstream dashstream` block with its `server` lines replaced by one per port of `upstreamPorts` on
 * loopback (each line's parameters kept as written), for several `serve` processes behind one server block.
 */
export const upstreamBlock = (upstreamPorts: ReadonlyArray<number>): string => {
  const block = readmeBlock("upstream dashstream {")
  const lines = [...block.matchAll(/^(\s*)server \S+:8080( [^;]*)?;.*$/gm)]
  if (lines.length === 0) throw new Error("the README's upstream block has no `server <address>:8080 ...;` line")
  const [indent, parameters] = [lines[0]![1]!, lines[0]![2] ?? ""]
  const servers = upstreamPorts.map((port) => `${indent}server 127.0.0.1:${port}${parameters};`).join("\n")
  return block.replace(/^\s*server \S+:8080[^\n]*\n/gm, "").replace(/\{\n/, `{\n${servers}\n`)
}

/** Replaces `pattern` in `text`, which must match exactly once (so that a changed README fails here, loudly). */
const replaceOnce = (text: string, pattern: RegExp, by: string, what: string): string => {
  const count = text.match(new RegExp(pattern.source, `${pattern.flags.replace("g", "")}g`))?.length ?? 0
  if (count !== 1) throw new Error(`the README's nginx block should have exactly one ${what}; found ${count}`)
  return text.replace(pattern, by)
}

/**
 * The README's server block listening on `127.0.0.1:<listenPort>` and proxying to Dashstream on `upstreamPort` of
 * loopback, or to the `upstream dashstream` block ({@link upstreamBlock}) when it is `"dashstream"`.
 * `forwardedProto` replaces `$scheme` in the `X-Forwarded-Proto` line (`"https"`: nginx says HTTPS, as a TLS listener
 * would); absent, the line is kept as written.
 */
export const serverBlock = (
  listenPort: number,
  upstreamPort: number | "dashstream",
  forwardedProto?: string
): string => {
  let block = readmeNginxBlock()
  block = replaceOnce(block, /^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${listenPort};`, "`listen 80;`")
  block = replaceOnce(
    block,
    /proxy_pass http:\/\/127\.0\.0\.1:8080;/,
    `proxy_pass http://${upstreamPort === "dashstream" ? upstreamPort : `127.0.0.1:${upstreamPort}`};`,
    "proxy_pass to 127.0.0.1:8080"
  )
  block = replaceOnce(block, /location \/dashboards\/ \{/, "location /dashboards/ {", "`location /dashboards/`")
  if (forwardedProto !== undefined) {
    block = replaceOnce(
      block,
      /X-Forwarded-Proto \$scheme;/,
      `X-Forwarded-Proto ${forwardedProto};`,
      "X-Forwarded-Proto line"
    )
  }
  return block
}

/** A running nginx. */
export interface Nginx {
  /** `nginx -s reload`: SIGHUP to the master; resolves once a new worker answers. */
  readonly reload: () => Promise<void>
  /** The error log so far (for failure messages). */
  readonly errorLog: () => string
  /** SIGQUIT (graceful), SIGKILL after 5 s; removes its directory. */
  readonly stop: () => Promise<void>
}

const waitForPort = async (port: number, timeoutMs: number, child: ChildProcess, log: () => string) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}:\n${log()}`)
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: "127.0.0.1", port }, () => {
        socket.destroy()
        resolve(true)
      })
      socket.on("error", () => resolve(false))
    })
    if (open) return
    if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port} in ${timeoutMs} ms:\n${log()}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/**
 * Starts nginx in the foreground (`-g 'daemon off;'`) with its own prefix directory (pid file, error log, temp paths)
 * and the given server blocks inside an `http` block that compresses event streams (as a site may; see below), and
 * resolves once every one of `ports` accepts connections. `worker_shutdown_timeout 2s`
 * makes a reload end the old worker's open event streams after 2 s, so that a test sees clients reconnect.
 */
export const startNginx = async (servers: ReadonlyArray<string>, ports: ReadonlyArray<number>): Promise<Nginx> => {
  const dir = mkdtempSync(join(tmpdir(), "dashstream-nginx-"))
  for (const sub of ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(join(dir, sub))
  const errorLogPath = join(dir, "error.log")
  const conf = `
${process.getuid?.() === 0 ? "user root;" : ""}
worker_processes 1;
pid ${join(dir, "nginx.pid")};
error_log ${errorLogPath} notice;
worker_shutdown_timeout 2s;
events { worker_connections 512; }
http {
  # As a site-wide configuration may (Debian's nginx.conf turns gzip on): the README's block must turn it off for
  # event streams, or nginx would hold events back in its compressor.
  gzip on;
  gzip_types text/event-stream application/json;
  access_log ${join(dir, "access.log")};
  client_body_temp_path ${join(dir, "client_body")};
  proxy_temp_path ${join(dir, "proxy")};
  fastcgi_temp_path ${join(dir, "fastcgi")};
  uwsgi_temp_path ${join(dir, "uwsgi")};
  scgi_temp_path ${join(dir, "scgi")};
${servers.join("\n")}
}
`
  writeFileSync(join(dir, "nginx.conf"), conf)
  const errorLog = () => {
    try {
      return readFileSync(errorLogPath, "utf8")
    } catch {
      return ""
    }
  }
  const child = spawn(nginxPath, ["-p", dir, "-c", join(dir, "nginx.conf"), "-e", errorLogPath, "-g", "daemon off;"], {
    stdio: ["ignore", "inherit", "inherit"]
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  try {
    for (const port of ports) await waitForPort(port, 10_000, child, errorLog)
  } catch (error) {
    child.kill("SIGKILL")
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  let reloads = 0
  return {
    errorLog,
    reload: async () => {
      const before = (errorLog().match(/start worker process \d+/g) ?? []).length
      reloads++
      child.kill("SIGHUP")
      const deadline = Date.now() + 10_000
      while ((errorLog().match(/start worker process \d+/g) ?? []).length <= before) {
        if (Date.now() > deadline)
          throw new Error(`nginx started no new worker after reload ${reloads}:\n${errorLog()}`)
        await new Promise((r) => setTimeout(r, 50))
      }
    },
    stop: async () => {
      if (child.exitCode === null) {
        child.kill("SIGQUIT")
        const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
        await exited
        clearTimeout(timer)
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** A response read whole. */
export interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly text: string
}

/**
 * One HTTP request from the loopback address `from` (`127.0.0.2`: another client than nginx's `127.0.0.1`), to `url`,
 * with `headers` and an optional JSON `body` (or `rawBody`, sent as it is).
 */
export const requestFrom = (
  from: string,
  url: string,
  method: string,
  headers: Readonly<Record<string, string>> = {},
  body?: unknown,
  rawBody?: string
): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const target = new URL(url)
    const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body))
    const req = httpRequest({
      host: target.hostname,
      port: Number(target.port),
      path: `${target.pathname}${target.search}`,
      method,
      localAddress: from,
      agent: false,
      headers: { ...(payload === undefined ? {} : { "content-type": "application/json" }), ...headers }
    })
    req.on("error", reject)
    req.on("response", (res) => {
      const parts: Array<Buffer> = []
      res.on("data", (d: Buffer) => parts.push(d))
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString() })
      )
      res.on("error", reject)
    })
    req.end(payload)
  })
