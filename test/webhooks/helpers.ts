// Real HTTP receivers on 127.0.0.1 for delivery tests, signature checks written independently
// of the server's code, and small API helpers. Waits are event- or state-driven with a safety
// deadline, never fixed sleeps.
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { AppConfig } from '../../src/app.ts'
import { freePort, serverEnv, startServer as startProcess, type ServerProcess } from '../processes.ts'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { bearer, expectStatus, SAFETY_MS, type Api } from '../support/index.ts'

export { eventually, SAFETY_MS } from '../support/index.ts'

export interface Received {
  headers: http.IncomingHttpHeaders
  body: string
  method: string
  url: string
}

export type Responder = (req: Received, index: number) => number | Promise<number>

/** An HTTP server that records every request and answers with the responder's status. */
export class Receiver {
  readonly requests: Received[] = []
  private waiters: { pred: () => boolean; resolve: () => void }[] = []
  private server: http.Server
  port = 0
  responder: Responder = () => 200

  constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const received: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), method: req.method ?? '', url: req.url ?? '' }
        const index = this.requests.length
        this.requests.push(received)
        void Promise.resolve(this.responder(received, index)).then(
          (status) => {
            res.writeHead(status, { 'content-type': 'text/plain' })
            res.end(status >= 300 ? `receiver says ${status}` : 'ok')
            this.notify()
          },
          () => res.destroy(),
        )
      })
    })
  }

  host = '127.0.0.1'

  async listen(t: Test, port = 0, host = '127.0.0.1'): Promise<this> {
    this.host = host
    await new Promise<void>((resolve) => this.server.listen(port, host, resolve))
    this.port = (this.server.address() as AddressInfo).port
    t.teardown(() => this.close())
    return this
  }

  async close(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  url(path = '/hook'): string {
    return `http://${this.host}:${this.port}${path}`
  }

  private notify(): void {
    for (const w of [...this.waiters]) {
      if (w.pred()) {
        this.waiters = this.waiters.filter((x) => x !== w)
        w.resolve()
      }
    }
  }

  /** Resolves once at least `n` requests matching `pred` have been answered. */
  waitFor(n: number, pred: (r: Received) => boolean = () => true): Promise<Received[]> {
    const matching = (): Received[] => this.requests.filter(pred)
    return new Promise((resolve, reject) => {
      const check = (): boolean => matching().length >= n
      if (check()) return resolve(matching())
      const timer = setTimeout(() => reject(new Error(`receiver: expected ${n} requests, got ${matching().length}`)), SAFETY_MS)
      this.waiters.push({
        pred: check,
        resolve: () => {
          clearTimeout(timer)
          resolve(matching())
        },
      })
    })
  }
}

export async function receiver(t: Test, responder?: Responder): Promise<Receiver> {
  const r = new Receiver()
  if (responder) r.responder = responder
  return r.listen(t)
}

/** A receiver that holds every request until `release()` (then answers 200); released at teardown too. */
export async function heldReceiver(t: Test): Promise<{ rx: Receiver; release: () => void }> {
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  t.teardown(() => release())
  const rx = await receiver(t, async () => {
    await held
    return 200
  })
  return { rx, release }
}

/** The receiver's own check of `sha256=<hex HMAC-SHA256(secret, raw body)>`, in constant time. */
export function verifySignature(secret: string, body: string, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`)
  const given = Buffer.from(header)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

export function verifyTimestamped(secret: string, timestamp: string | string[] | undefined, body: string, header: string | string[] | undefined): boolean {
  if (typeof timestamp !== 'string' || !/^\d+$/.test(timestamp)) return false
  return verifySignature(secret, `${timestamp}.${body}`, header)
}

export const FAST_ENV: Record<string, string> = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_RETRY_SCHEDULE: '1,1,1',
  WEBHOOK_TIMEOUT_MS: '2000',
  WEBHOOK_CLAIM_TIMEOUT_MS: '3000',
  // Tests of retries and disabling make many failed attempts quickly; the circuit breaker has
  // its own tests (isolation.test.ts).
  WEBHOOK_BREAKER_FAILURES: '1000',
}

export async function createWebhook(api: Api, token: string, agentId: string, url: string, events: string[] = ['message.created']): Promise<{ id: string; secret: string }> {
  const res = await api({ method: 'POST', url: `/api/v1/agents/${agentId}/webhooks`, headers: bearer(token), payload: { url, events } })
  return expectStatus<{ id: string; secret: string }>(res, 201, 'create webhook')
}

// ---- real server processes (for the kill test) ----

/** A real server process on the test's database and Redis prefix; resolves once /health answers. */
export async function startServer(t: Test, config: AppConfig, extra: Record<string, string>): Promise<ServerProcess> {
  return startProcess(t, serverEnv(config, await freePort(), extra))
}
