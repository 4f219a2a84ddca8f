import type { IncomingMessage } from "node:http"
import type { TLSSocket } from "node:tls"
import { clientAddress, forwardedClient, forwardedHttps, type TrustedProxies } from "../ReverseProxy.js"

/**
 * Where a request came from (docs/api.md sections 14 and 16): the client address that sign-in throttling counts by and
 * the request log shows, and whether the request came over HTTPS, which decides the session cookie's `Secure`
 * attribute.
 */
export interface ClientInfo {
  /** The client's IP address as text (`"?"` when the socket no longer knows it); IPv4-mapped IPv6 shown as IPv4. */
  readonly address: string
  /** True when the request came over HTTPS. */
  readonly https: boolean
}

/** What {@link trustForwarded} decided for a request from a trusted proxy. */
const forwarded = new WeakMap<IncomingMessage, ClientInfo>()

/**
 * Called once per request at the top of the handler (`Server.ts`) when `--trust-proxy` is set: if the TCP peer is one
 * of `proxies`, the request's {@link ClientInfo} becomes the last untrusted address of `X-Forwarded-For` and the
 * scheme of `X-Forwarded-Proto` (see `forwardedClient`); from any other peer nothing is recorded and both headers stay
 * ignored.
 */
export const trustForwarded = (req: IncomingMessage, proxies: TrustedProxies): void => {
  const peer = req.socket.remoteAddress
  if (peer === undefined || !proxies.trusts(peer)) return
  const forwardedFor = req.headers["x-forwarded-for"]
  const forwardedProto = req.headers["x-forwarded-proto"]
  forwarded.set(req, {
    address: forwardedClient(peer, Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor, proxies),
    https: forwardedHttps(Array.isArray(forwardedProto) ? forwardedProto.join(",") : forwardedProto) || isTls(req)
  })
}

const isTls = (req: IncomingMessage): boolean => (req.socket as Partial<TLSSocket>).encrypted === true

/**
 * The {@link ClientInfo} of a request, the one place every consumer asks (console sign-in throttling and cookie, the
 * request log of every lane): what {@link trustForwarded} recorded for a request from a trusted proxy, otherwise the
 * TCP peer's address and whether its socket is TLS (a server of your own that mounts the handler in
 * `https.createServer`). `X-Forwarded-*` headers from any other peer are never read.
 */
export const clientInfo = (req: IncomingMessage): ClientInfo =>
  forwarded.get(req) ?? {
    address: req.socket.remoteAddress === undefined ? "?" : clientAddress(req.socket.remoteAddress),
    https: isTls(req)
  }
