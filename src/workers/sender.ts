// One HTTP POST of a delivery: no redirects followed, a connect timeout and a total timeout, the
// response body read only up to a cap (for the error message), and every connection checked
// against the SSRF policy on the address it actually connects to. Connections are kept alive
// briefly (a busy endpoint gets many deliveries); a reused socket goes to an address that was
// validated when it was opened.
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import { isAllowedAddress, parseTargetUrl, safeLookup, UnsafeUrlError, type AddressPolicy } from '../lib/ssrf.ts'

export interface SendOptions {
  policy: AddressPolicy
  /** Keep-alive agents (see deliveryAgents); a fresh connection per attempt when absent. */
  agents?: DeliveryAgents
  /** Whole attempt: connect, send, response headers. */
  timeoutMs: number
  connectTimeoutMs: number
  /** At most this many bytes of a non-2xx response body are read. */
  maxResponseBytes: number
  /** Aborts the attempt (a graceful stop's deadline): the result then has `abandoned` set. */
  signal?: AbortSignal
}

export interface SendResult {
  ok: boolean
  statusCode: number | null
  error: string | null
  durationMs: number
  /** Cut short by `signal` before the receiver answered: no outcome to record. */
  abandoned?: boolean
}

const ERROR_SNIPPET = 300

export interface DeliveryAgents {
  http: http.Agent
  https: https.Agent
  destroy: () => void
}

/** Keep-alive agents whose new connections resolve names through the SSRF-checking lookup. */
export function deliveryAgents(policy: AddressPolicy, maxSocketsPerHost: number): DeliveryAgents {
  // Idle sockets close after 4 s, under the 5 s idle timeout of common servers (Node's included),
  // so a request rarely lands on a socket the receiver is closing.
  const options = { keepAlive: true, keepAliveMsecs: 1_000, maxSockets: maxSocketsPerHost, maxFreeSockets: maxSocketsPerHost, timeout: 4_000, lookup: safeLookup(policy) }
  const agents = { http: new http.Agent(options), https: new https.Agent(options) }
  return { ...agents, destroy: () => (agents.http.destroy(), agents.https.destroy()) }
}

function clean(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex -- strip control characters from a receiver's answer
      .replace(/[\u0000-\u001f\u007f]+/g, ' ')
      .trim()
      .slice(0, ERROR_SNIPPET)
  )
}

export function send(rawUrl: string, headers: Record<string, string>, body: string, opts: SendOptions): Promise<SendResult> {
  const started = performance.now()
  const elapsed = (): number => Math.round(performance.now() - started)
  let url: URL
  try {
    url = parseTargetUrl(rawUrl, opts.policy)
    const host = url.hostname.replace(/^\[|\]$/g, '')
    if (net.isIP(host) && !isAllowedAddress(opts.policy, host, host)) throw new UnsafeUrlError(`the address ${host} is not allowed`)
  } catch (error) {
    return Promise.resolve({ ok: false, statusCode: null, error: `refused: ${(error as Error).message}`, durationMs: 0 })
  }

  const abandoned = { ok: false, statusCode: null, error: 'abandoned: the instance stopped during the attempt', abandoned: true }
  if (opts.signal?.aborted) return Promise.resolve({ ...abandoned, durationMs: 0 })

  return new Promise<SendResult>((resolve) => {
    let settled = false
    const payload = Buffer.from(body, 'utf8')
    const finish = (result: Omit<SendResult, 'durationMs'>): void => {
      if (settled) return
      settled = true
      clearTimeout(total)
      clearTimeout(connect)
      opts.signal?.removeEventListener('abort', abandon)
      resolve({ ...result, durationMs: elapsed() })
    }
    const abandon = (): void => {
      finish(abandoned)
      request.destroy()
    }
    const fail = (error: string): void => finish({ ok: false, statusCode: null, error })

    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(payload.length), ...(opts.agents ? {} : { connection: 'close' }) },
      agent: opts.agents ? (url.protocol === 'https:' ? opts.agents.https : opts.agents.http) : false,
      lookup: safeLookup(opts.policy),
    })

    opts.signal?.addEventListener('abort', abandon, { once: true })
    const total = setTimeout(() => {
      fail(`timed out after ${opts.timeoutMs} ms`)
      request.destroy()
    }, opts.timeoutMs)
    let connect: NodeJS.Timeout | undefined
    request.on('socket', (socket) => {
      if (!socket.connecting) return
      connect = setTimeout(() => {
        fail(`could not connect within ${opts.connectTimeoutMs} ms`)
        request.destroy()
      }, opts.connectTimeoutMs)
      socket.once('connect', () => clearTimeout(connect))
    })

    request.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ? `${error.code}: ` : ''
      fail(clean(`${code}${error.message}`))
    })

    request.on('response', (response) => {
      const status = response.statusCode ?? 0
      if (status >= 200 && status < 300) {
        finish({ ok: true, statusCode: status, error: null })
        // Drain up to the cap so the socket can be reused; a longer body closes it.
        let size = 0
        response.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size > opts.maxResponseBytes) response.destroy()
        })
        response.on('error', () => {})
        return
      }
      const chunks: Buffer[] = []
      let size = 0
      const done = (): void => {
        const text = clean(Buffer.concat(chunks).toString('utf8'))
        const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : ''
        finish({ ok: false, statusCode: status, error: `HTTP ${status}${redirect}${text ? `: ${text}` : ''}` })
        response.destroy()
      }
      response.on('data', (chunk: Buffer) => {
        if (size >= opts.maxResponseBytes) return
        chunks.push(chunk.subarray(0, opts.maxResponseBytes - size))
        size += chunk.length
        if (size >= opts.maxResponseBytes) done()
      })
      response.on('end', done)
      response.on('error', done)
      response.on('aborted', done)
    })

    request.end(payload)
  })
}
