/**
 * The original client libraries as they frame a push (docs/client-compat.md): path, headers, JSON encoder and the
 * order of the body's keys, and {@link replay}, which sends a body exactly as one of them would.
 */
import { expect } from "vitest"
import { type Api, nodeRequest, type RawReply } from "./harness.js"

const escapeNonAscii = (json: string): string =>
  json.replace(/[\u007f-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"))

/** Python 2 `json.dumps` defaults: `", "` and `": "` separators, `ensure_ascii`. */
export const pythonJson = (v: unknown): string => {
  if (Array.isArray(v)) return "[" + v.map(pythonJson).join(", ") + "]"
  if (typeof v === "object" && v !== null)
    return (
      "{" +
      Object.entries(v)
        .map(([k, x]) => `${escapeNonAscii(JSON.stringify(k))}: ${pythonJson(x)}`)
        .join(", ") +
      "}"
    )
  return escapeNonAscii(JSON.stringify(v))
}

/** PHP `json_encode` defaults: compact, `\/` for slashes, `\uXXXX` for non-ASCII. */
export const phpJson = (v: unknown): string => escapeNonAscii(JSON.stringify(v)).replace(/\//g, "\\/")

/** Compact JSON with raw UTF-8 (Ruby `to_json`, Node `JSON.stringify`, Jackson). */
const compactJson = (v: unknown): string => JSON.stringify(v)

/** How one client frames a push: path, headers (given the body) and JSON encoder. */
interface Client {
  readonly path: string
  readonly encode: (v: unknown) => string
  readonly headers: (body: string) => Record<string, string>
  /** The body with its keys in the client's order: `fields` (the point, or the clear command) after the stream. */
  readonly body: (accessKey: string, stream: string, fields: Record<string, unknown>) => Record<string, unknown>
}

/** Key orders of the bodies: Python's dict, Ruby's hash (also PHP, Java, jQuery), Node's object literal. */
const pythonOrder: Client["body"] = (accessKey, stream, fields) => ({ streamName: stream, ...fields, accessKey })
const rubyOrder: Client["body"] = (accessKey, stream, fields) => ({ accessKey, streamName: stream, ...fields })
const nodeOrder: Client["body"] = (accessKey, stream, fields) => ({ streamName: stream, accessKey, ...fields })

const bytes = (s: string): string => String(Buffer.byteLength(s))

/** The Python client's urllib2 request; versions up to 1.3 differ only in the URL's trailing slash. */
const python: Client = {
  path: "/customSend",
  encode: pythonJson,
  body: pythonOrder,
  headers: (body) => ({
    "Accept-Encoding": "identity",
    "Content-Length": bytes(body),
    "Content-Type": "application/x-www-form-urlencoded",
    Connection: "close",
    "User-Agent": "Python-urllib/2.7"
  })
}

/** Each client library as it frames a push. */
export const clients = {
  "Python 1.5.0 (urllib2)": python,
  "Python <= 1.3": { ...python, path: "/customSend/" },
  "Ruby leftronicapi 1.3 (Net::HTTP)": {
    path: "/customSend/",
    encode: compactJson,
    body: rubyOrder,
    headers: (body) => ({
      "Accept-Encoding": "gzip;q=1.0,deflate;q=0.6,identity;q=0.3",
      Accept: "application/json",
      "User-Agent": "Ruby",
      "Content-Type": "application/json",
      "Content-Length": bytes(body)
    })
  },
  "PHP leftronic.php (libcurl)": {
    path: "/customSend/",
    encode: phpJson,
    body: rubyOrder,
    headers: (body) => ({
      Accept: "*/*",
      "Content-Length": bytes(body),
      "Content-Type": "application/x-www-form-urlencoded"
    })
  },
  "Node leftronic 0.1.x": {
    path: "/customSend",
    encode: compactJson,
    body: nodeOrder,
    // json.length: UTF-16 code units, equal to the byte length for the ASCII bodies used here.
    headers: (body) => ({
      "Content-Type": "application/x-www-form-urlencoded",
      "Content-Length": String(body.length),
      Connection: "keep-alive"
    })
  },
  "Java biz.neustar:leftronic (HttpClient 4.1)": {
    path: "/customSend/",
    encode: compactJson,
    body: rubyOrder,
    headers: (body) => ({
      "Content-Length": bytes(body),
      Connection: "Keep-Alive",
      "User-Agent": "Leftronic Client/DEVELOPMENT"
    })
  },
  "Browser jQuery $.post": {
    path: "/customSend/",
    encode: compactJson,
    body: rubyOrder,
    headers: (body) => ({
      "Content-Type": "application/x-www-form-urlencoded; charset=UTF-8",
      "Content-Length": bytes(body),
      Accept: "*/*",
      "X-Requested-With": "XMLHttpRequest"
    })
  }
} satisfies Record<string, Client>

/** A client library named in {@link clients}. */
export type ClientName = keyof typeof clients

/** Posts `body` exactly as `client` would (its path and headers, plus `headers`); `expectContinue` as nodeRequest's. */
export const send = (
  api: Api,
  client: ClientName,
  body: string,
  options: { readonly headers?: Record<string, string>; readonly expectContinue?: boolean } = {}
): Promise<RawReply> => {
  const c: Client = clients[client]
  return nodeRequest(api.baseUrl, {
    method: "POST",
    path: c.path,
    headers: { ...c.headers(body), ...options.headers },
    body,
    ...(options.expectContinue === undefined ? {} : { expectContinue: options.expectContinue })
  })
}

/** Sends `body` exactly as `client` would, and checks the reply is what every client accepts. */
export const replay = async (api: Api, client: ClientName, body: string): Promise<void> => {
  const r = await send(api, client, body)
  // Java needs exactly 200; Node's callback only fires on body data; urllib2 must not be redirected.
  expect(r.status, r.text).toBe(200)
  expect(r.text.length).toBeGreaterThan(0)
  expect(JSON.parse(r.text)).toEqual({ message: "Success!" })
}
