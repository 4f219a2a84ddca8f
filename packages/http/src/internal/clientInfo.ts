import type { IncomingMessage } from "node:http"
import type { TLSSocket } from "node:tls"

/**
 * Where a request came from, as the console sees it (contract section 14): the client address that sign-in throttling
 * counts by, and whether the request came over HTTPS, which decides the session cookie's `Secure` attribute.
 */
export interface ClientInfo {
  /** The client's IP address as text (`"?"` when the socket no longer knows it). */
  readonly address: string
  /** True when the request came over HTTPS. */
  readonly https: boolean
}

/**
 * The {@link ClientInfo} of a request: today the TCP peer's address and whether its socket is TLS (a server of your own
 * that mounts the handler in `https.createServer`). This is the one place to change when Dashstream runs behind a
 * reverse proxy (contract section 16, `--trust-proxy`): for a trusted peer only, the address becomes the last
 * untrusted address of `X-Forwarded-For` and `https` follows `X-Forwarded-Proto`; from any other peer both headers
 * stay ignored, as they are here.
 */
export const clientInfo = (req: IncomingMessage): ClientInfo => ({
  address: req.socket.remoteAddress ?? "?",
  https: (req.socket as Partial<TLSSocket>).encrypted === true
})
