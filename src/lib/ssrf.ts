// SSRF protection for outbound webhook and integration deliveries. A target URL must be http(s)
// and must not reach loopback, private, link-local, unspecified, CGNAT, multicast or other
// special-purpose addresses. The check runs when a URL is registered and again on every
// connection, on the address the name actually resolved to (a `lookup` for node:http that
// validates), so a DNS record that changes after registration (rebinding) cannot reach inside.
// Operators may allow private targets (WEBHOOK_ALLOW_PRIVATE) or specific hosts and CIDRs
// (WEBHOOK_ALLOW_HOSTS), e.g. for a self-hosted receiver on 127.0.0.1.
import dns from 'node:dns'
import net from 'node:net'

export interface AddressPolicy {
  /** Every address is allowed (still http(s) only). */
  allowPrivate: boolean
  /** Host names (exact, case-insensitive) and CIDRs / single IPs that are allowed anyway. */
  allowHosts: string[]
}

export class UnsafeUrlError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UnsafeUrlError'
  }
}

const MAX_URL_LENGTH = 2048

// Special-purpose ranges (RFC 6890 and its IANA registries) that a webhook must never reach.
const FORBIDDEN_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT (shared address space)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata endpoints live here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
]

const FORBIDDEN_V6: [string, number][] = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, …)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (embeds an IPv4 address)
  ['fc00::', 7], // unique local (ULA)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
]

const forbidden = new net.BlockList()
for (const [prefix, bits] of FORBIDDEN_V4) forbidden.addSubnet(prefix, bits, 'ipv4')
for (const [prefix, bits] of FORBIDDEN_V6) forbidden.addSubnet(prefix, bits, 'ipv6')

/** The 16 bytes of an IPv6 address (assumes net.isIPv6). */
function ipv6Bytes(address: string): number[] {
  let text = address.split('%')[0]!.toLowerCase()
  const bytes: number[] = []
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  let tail: number[] = []
  if (dotted) {
    tail = dotted[1]!.split('.').map(Number)
    text = text.slice(0, -dotted[1]!.length) + '0:0'
  }
  const [head, rest] = text.includes('::') ? text.split('::') : [text, undefined]
  const groups = (s: string | undefined): number[] =>
    s
      ? s
          .split(':')
          .filter(Boolean)
          .map((g) => parseInt(g, 16))
      : []
  const left = groups(head)
  const right = groups(rest)
  const middle = rest === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0)
  for (const g of [...left, ...middle, ...right]) bytes.push((g >> 8) & 0xff, g & 0xff)
  if (dotted) bytes.splice(12, 4, ...tail)
  return bytes
}

/** An IPv4 address embedded in an IPv6 one (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96). */
function embeddedIpv4(address: string): string | null {
  const b = ipv6Bytes(address)
  const zeros = (from: number, to: number): boolean => b.slice(from, to).every((x) => x === 0)
  const v4 = `${b[12]}.${b[13]}.${b[14]}.${b[15]}`
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4 // ::ffff:0:0/96
  if (zeros(0, 12) && !(b[12] === 0 && b[13] === 0 && b[14] === 0 && (b[15] ?? 0) <= 1)) return v4 // ::/96 (not :: or ::1)
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return v4 // 64:ff9b::/96
  return null
}

/** Whether an IP address is one a webhook must never reach (loopback, private, link-local, …). */
export function isForbiddenAddress(address: string): boolean {
  const family = net.isIP(address)
  if (family === 4) return forbidden.check(address, 'ipv4')
  if (family === 6) {
    const v4 = embeddedIpv4(address)
    if (v4) return forbidden.check(v4, 'ipv4')
    return forbidden.check(address.split('%')[0]!, 'ipv6')
  }
  return true // not an IP address at all: refuse rather than guess
}

interface CompiledPolicy {
  allowPrivate: boolean
  hosts: Set<string>
  nets: net.BlockList
}

const compiled = new WeakMap<AddressPolicy, CompiledPolicy>()

function compile(policy: AddressPolicy): CompiledPolicy {
  let c = compiled.get(policy)
  if (c) return c
  const hosts = new Set<string>()
  const nets = new net.BlockList()
  for (const entry of policy.allowHosts) {
    const [ip, bits] = entry.split('/')
    const family = net.isIP(ip ?? '')
    if (family) {
      const type = family === 4 ? 'ipv4' : 'ipv6'
      nets.addSubnet(ip!, bits === undefined ? (family === 4 ? 32 : 128) : Number(bits), type)
    } else {
      hosts.add(entry.toLowerCase().replace(/\.$/, ''))
    }
  }
  c = { allowPrivate: policy.allowPrivate, hosts, nets }
  compiled.set(policy, c)
  return c
}

/** Whether the policy lets a connection reach `address` (resolved from `hostname`). */
export function isAllowedAddress(policy: AddressPolicy, hostname: string, address: string): boolean {
  const c = compile(policy)
  if (c.allowPrivate || c.hosts.has(normalHost(hostname))) return true
  const family = net.isIP(address)
  if (family && c.nets.check(address, family === 4 ? 'ipv4' : 'ipv6')) return true
  return !isForbiddenAddress(address)
}

function normalHost(hostname: string): string {
  return hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
}

/**
 * Parses and checks a target URL without touching the network: http(s) only, no credentials in
 * it, and a literal IP (or `localhost`) must be allowed by the policy. Throws UnsafeUrlError.
 */
export function parseTargetUrl(raw: string, policy: AddressPolicy): URL {
  if (raw.length > MAX_URL_LENGTH) throw new UnsafeUrlError(`the URL is longer than ${MAX_URL_LENGTH} characters`)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UnsafeUrlError('not a valid absolute URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UnsafeUrlError('only http and https URLs are accepted')
  if (url.username || url.password) throw new UnsafeUrlError('credentials in the URL are not accepted')
  const host = normalHost(url.hostname)
  if (!host) throw new UnsafeUrlError('the URL has no host')
  const c = compile(policy)
  if (c.allowPrivate || c.hosts.has(host)) return url
  if (net.isIP(host)) {
    if (!isAllowedAddress(policy, host, host)) throw new UnsafeUrlError(`the address ${host} is private, loopback, link-local or reserved`)
    return url
  }
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal') || !host.includes('.')) {
    throw new UnsafeUrlError(`the host ${host} is not a public name`)
  }
  return url
}

const REGISTRATION_LOOKUP_TIMEOUT_MS = 2_000

/**
 * Registration-time check: parseTargetUrl, then resolve the name and refuse it when it resolves
 * to a forbidden address. A name that does not resolve (yet) is accepted: every connection checks
 * the resolved address again.
 */
export async function checkTargetUrl(raw: string, policy: AddressPolicy): Promise<URL> {
  const url = parseTargetUrl(raw, policy)
  const host = normalHost(url.hostname)
  if (net.isIP(host) || compile(policy).allowPrivate) return url
  const addresses = await Promise.race([
    dns.promises.lookup(host, { all: true, verbatim: true }).catch(() => [] as dns.LookupAddress[]),
    new Promise<dns.LookupAddress[]>((resolve) => setTimeout(() => resolve([]), REGISTRATION_LOOKUP_TIMEOUT_MS).unref()),
  ])
  const bad = addresses.find((a) => !isAllowedAddress(policy, host, a.address))
  if (bad) throw new UnsafeUrlError(`the host ${host} resolves to ${bad.address}, a private, loopback, link-local or reserved address`)
  return url
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void

/**
 * A `lookup` for http.request / net.connect that resolves the name and refuses the connection
 * when any address it resolved to is not allowed (the connection then fails with
 * ERR_UNSAFE_ADDRESS, recorded as the delivery's error).
 */
export function safeLookup(policy: AddressPolicy) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, [])
      const list = addresses
      const bad = list.find((a) => !isAllowedAddress(policy, hostname, a.address))
      if (bad || !list.length) {
        const error = new Error(`refused to connect to ${hostname}: it resolves to ${bad?.address ?? 'nothing'}, a forbidden address`) as NodeJS.ErrnoException
        error.code = 'ERR_UNSAFE_ADDRESS'
        return callback(error, [])
      }
      if (options.all) return callback(null, list)
      callback(null, list[0]!.address, list[0]!.family)
    })
  }
}
