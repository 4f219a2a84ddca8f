import { BlockList, isIP } from "node:net"
import { Either } from "effect"

/**
 * Running behind a reverse proxy (docs/api.md section 16): the base path Dashstream is served under
 * (`serve --base-path`), the peers whose forwarded headers are believed (`serve --trust-proxy`), and the one place
 * that reads `X-Forwarded-For` / `X-Forwarded-Proto`.
 */

/**
 * Checks a base path (`--base-path`, `DASHSTREAM_BASE_PATH`, named by `name` in the message): `/` followed by
 * segments of letters, digits and `-._~` separated by single slashes, no trailing slash, no `.` or `..` segment
 * (`/dashboards`, `/tools/dash`). Answers (Right) the path as it is (`""` for `/`, the root: no prefix) or, for
 * anything else (an empty or blank value among them: the root is written `/`), (Left) one sentence saying what is
 * accepted.
 */
export const parseBasePath = (value: string, name: string): Either.Either<string, string> => {
  const text = value.trim()
  if (text === "/") return Either.right("")
  const segments = text.split("/").slice(1)
  const ok =
    text.startsWith("/") &&
    segments.every((segment) => /^[A-Za-z0-9._~-]+$/.test(segment) && segment !== "." && segment !== "..")
  return ok
    ? Either.right(text)
    : Either.left(
        `${name} must be a URL path such as /dashboards: a leading slash, segments of letters, digits and -._~ ` +
          `separated by single slashes, no trailing slash and no . or .. segment (/ for the root), got ${JSON.stringify(value)}`
      )
}

/**
 * The request target `url` as seen under `basePath` (docs/api.md section 16): `/dash/customSend` is `/customSend`, `/dash`
 * and `/dash?x` are `/` and `/?x`; `undefined` for a target outside it (`/dashboards` for the base path `/dash`,
 * `/customSend`). Matched case-sensitively, as every path of the contract.
 */
export const pathUnder = (url: string, basePath: string): string | undefined => {
  if (!url.startsWith(basePath)) return undefined
  const rest = url.slice(basePath.length)
  if (rest === "" || rest.startsWith("?")) return `/${rest}`
  return rest.startsWith("/") ? rest : undefined
}

/**
 * The peers whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed (`--trust-proxy`): addresses and CIDR ranges,
 * IPv4 and IPv6. An IPv4 entry also matches its IPv4-mapped IPv6 form (`::ffff:127.0.0.1`), as a dual-stack socket
 * reports it.
 */
export interface TrustedProxies {
  /** The entries as given, normalised (`127.0.0.1`, `10.0.0.0/8`, `::1`), for messages and documentation. */
  readonly entries: ReadonlyArray<string>
  /** True when `address` (IPv4 or IPv6 text, possibly IPv4-mapped) is one of the entries; false for anything else. */
  readonly trusts: (address: string) => boolean
  /**
   * The entries that trust every peer (`0.0.0.0/0`, `::/0`): any client may then choose its own address and scheme.
   * Accepted, but `serve` warns at start.
   */
  readonly everyone: ReadonlyArray<string>
}

/**
 * Parses a `--trust-proxy` list (`DASHSTREAM_TRUST_PROXY`, named by `name` in the message): addresses or CIDR ranges
 * separated by commas (`127.0.0.1`, `10.0.0.0/8,::1`, `fd00::/8`). Answers (Right) the {@link TrustedProxies} or (Left) one sentence naming the bad entry. Refused: anything that
 * is not an address (a host name, brackets as in `[::1]`, a zone as in `fe80::1%eth0`), a prefix length out of range
 * or with a leading zero (`/08`), and a range with host bits set (`10.0.0.1/8`: the sentence names the network,
 * `10.0.0.0/8`). Matching uses node's `net.BlockList`.
 */
export const parseTrustProxy = (value: string, name: string): Either.Either<TrustedProxies, string> => {
  const list = new BlockList()
  const entries: Array<string> = []
  const everyone: Array<string> = []
  for (const raw of value.split(",")) {
    const entry = raw.trim()
    const slash = entry.indexOf("/")
    const address = slash === -1 ? entry : entry.slice(0, slash)
    // node's isIP takes an IPv6 zone (`%eth0`), which names an interface of this machine, not a peer.
    const family = address.includes("%") ? 0 : isIP(address)
    const prefixText = slash === -1 ? undefined : entry.slice(slash + 1)
    const max = family === 4 ? 32 : 128
    const prefix = prefixText === undefined ? max : /^(?:0|[1-9]\d{0,2})$/.test(prefixText) ? Number(prefixText) : -1
    if (family === 0 || prefix < 0 || prefix > max) {
      return Either.left(
        `${name} must be IP addresses or CIDR ranges separated by commas, such as 127.0.0.1 or 10.0.0.0/8,::1 ` +
          `(no brackets, no zone, a prefix length without leading zeros), got ${JSON.stringify(entry)}`
      )
    }
    const bits = family === 4 ? ipv4Bits(address) : ipv6Bits(address)
    const mask = ((1n << BigInt(prefix)) - 1n) << BigInt(max - prefix)
    if ((bits & mask) !== bits) {
      const network = `${family === 4 ? ipv4Text(bits & mask) : ipv6Text(bits & mask)}/${prefix}`
      return Either.left(
        `${name}: ${entry} has host bits set past its /${prefix} prefix; did you mean the network ${network}?`
      )
    }
    const type = family === 4 ? "ipv4" : "ipv6"
    if (prefix === max) list.addAddress(address, type)
    else list.addSubnet(address, prefix, type)
    const normal = prefix === max ? address : `${address}/${prefix}`
    entries.push(normal)
    if (prefix === 0) everyone.push(normal)
  }
  return Either.right({ entries, everyone, trusts: (address) => checks(list, address) })
}

/** The dotted text of 32 bits of IPv4. */
const ipv4Text = (bits: bigint): string => [24n, 16n, 8n, 0n].map((shift) => String((bits >> shift) & 0xffn)).join(".")

/** The text of 128 bits of IPv6, in the URL standard's compressed form (`fd00::`, `::1`). */
const ipv6Text = (bits: bigint): string => {
  const groups = Array.from({ length: 8 }, (_, i) => ((bits >> BigInt(112 - 16 * i)) & 0xffffn).toString(16))
  return new URL(`http://[${groups.join(":")}]`).hostname.slice(1, -1)
}

/** The 32 bits of an IPv4 address (checked by `isIP`). */
const ipv4Bits = (address: string): bigint =>
  address.split(".").reduce((bits, octet) => (bits << 8n) | BigInt(Number(octet)), 0n)

/**
 * The 128 bits of an IPv6 address (checked by `isIP`); the URL parser first rewrites any form (`::`, a dotted IPv4
 * tail) as hex groups.
 */
const ipv6Bits = (address: string): bigint => {
  const canonical = new URL(`http://[${address}]`).hostname.slice(1, -1)
  const [head, tail] = canonical.includes("::") ? canonical.split("::") : [canonical, undefined]
  const left = head === "" ? [] : head!.split(":")
  const right = tail === undefined || tail === "" ? [] : tail.split(":")
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right]
  return groups.reduce((bits, group) => (bits << 16n) | BigInt(parseInt(group, 16)), 0n)
}

/**
 * An `X-Forwarded-For` entry's address: `[2001:db8::1]` and `[2001:db8::1]:443` give `2001:db8::1`, `192.0.2.1:443`
 * gives `192.0.2.1` (some proxies add the port); anything else as it is.
 */
const hopAddress = (hop: string): string =>
  /^\[([^\]]+)\](?::\d+)?$/.exec(hop)?.[1] ?? /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(hop)?.[1] ?? hop

const checks = (list: BlockList, address: string): boolean => {
  const family = isIP(address)
  if (family === 0) return false
  // BlockList matches an IPv4 rule against the IPv4-mapped IPv6 form, not an IPv6 rule against plain IPv4: ask both.
  if (list.check(address, family === 4 ? "ipv4" : "ipv6")) return true
  const mapped = ipv4OfMapped(address)
  return mapped !== undefined && list.check(mapped, "ipv4")
}

/** The IPv4 address of an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`), else `undefined`. */
const ipv4OfMapped = (address: string): string | undefined => {
  const match = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address)
  return match !== null && isIP(match[1]!) === 4 ? match[1] : undefined
}

/**
 * An address as Dashstream names a client: an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, how a dual-stack socket
 * shows an IPv4 peer) as its IPv4 address, so one client is one address whichever way it came; others unchanged.
 */
export const clientAddress = (address: string): string => ipv4OfMapped(address) ?? address

/**
 * The client address of a request whose TCP peer `peer` is trusted (docs/api.md section 16): the last untrusted address
 * of `X-Forwarded-For` (`forwardedFor`, the header's value; several headers joined by commas), walking from the right
 * past trusted proxies (an entry may carry a port: `192.0.2.1:443`, `[2001:db8::1]:443`). Each proxy appends the
 * address it saw, so the entries left of the first untrusted one from the right were written by the client and are
 * never believed. When every entry is trusted the leftmost is the client; a malformed entry stops the walk at the last
 * address walked (a trusted proxy, whose neighbour wrote nonsense). No header or an empty one: the peer. The answer is
 * normalised by {@link clientAddress}.
 */
export const forwardedClient = (peer: string, forwardedFor: string | undefined, proxies: TrustedProxies): string => {
  let client = peer
  if (forwardedFor !== undefined) {
    const hops = forwardedFor.split(",")
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hopAddress(hops[i]!.trim())
      if (isIP(hop) === 0) break
      client = hop
      if (!proxies.trusts(hop)) break
    }
  }
  return clientAddress(client)
}

/**
 * Whether a request from a trusted proxy came over HTTPS: the first value of `X-Forwarded-Proto` (the scheme the
 * client used at the outermost proxy) is `https`, any case.
 */
export const forwardedHttps = (forwardedProto: string | undefined): boolean =>
  forwardedProto !== undefined && forwardedProto.split(",")[0]!.trim().toLowerCase() === "https"
