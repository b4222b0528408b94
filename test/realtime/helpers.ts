// Real sockets for realtime tests: a WebSocket client that records every frame and lets a test
// wait for the one it expects, plus helpers to listen on a free port and to start real server
// processes (several instances, shutdown). Waits are bounded only as a safety net: tests wait
// for events, never for time.
import net from 'node:net'
import type { FastifyInstance } from 'fastify'
import WebSocket from 'ws'
import { Compile } from 'typebox/compile'
import { SERVER_FRAMES } from '../../src/realtime/frames.ts'
import { Arrivals } from './arrivals.ts'
import { bearer, eventually, type Api } from '../support/index.ts'

// Every frame a test receives must match the published protocol (openapi/asyncapi.yaml).
const checkers = new Map<string, { Check: (v: unknown) => boolean; Errors: (v: unknown) => { instancePath: string; message: string }[] }>(
  Object.entries(SERVER_FRAMES).map(([type, schema]) => [type, Compile(schema as never)]),
)
function protocolViolation(frame: Frame): string | null {
  const checker = checkers.get(String(frame.type))
  if (!checker) return `unknown frame type ${String(frame.type)}`
  if (checker.Check(frame)) return null
  const first = checker.Errors(frame)[0]
  return `${String(frame['type'])} frame does not match its schema: ${first?.instancePath} ${first?.message}`
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- frames are checked field by field in the tests
export type Frame = Record<string, any>

export class WsClient {
  private readonly arrivals = new Arrivals<Frame>()
  /** Every frame received, in order. */
  readonly frames: Frame[] = this.arrivals.items
  /** Frames that did not match the published schemas; `next` fails while any exist. */
  readonly violations: string[] = []
  readonly closed: Promise<{ code: number; reason: string }>

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const frame = JSON.parse((data as Buffer).toString()) as Frame
      const violation = protocolViolation(frame)
      if (violation) this.violations.push(violation)
      this.arrivals.push(frame)
    })
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => {
        resolve({ code, reason: reason.toString() })
        this.arrivals.end(new Error(`socket closed (${code})`))
      })
    })
  }

  /** The first frame not yet taken that matches, now or when it arrives. */
  next(pred: (f: Frame) => boolean = () => true, what = 'frame'): Promise<Frame> {
    if (this.violations.length) return Promise.reject(new Error(this.violations.join('; ')))
    return this.arrivals.next(pred, what)
  }

  type(type: string, pred: (f: Frame) => boolean = () => true): Promise<Frame> {
    return this.next((f) => f.type === type && pred(f), `${type} frame`)
  }

  /** Frames of event types (those with an event_id), in order. */
  events(): Frame[] {
    return this.frames.filter((f) => typeof f.event_id === 'string')
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame))
  }

  close(): Promise<{ code: number; reason: string }> {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000)
    return this.closed
  }
}

export function wsUrl(app: FastifyInstance | string, params: Record<string, string | undefined> = {}): string {
  const base = typeof app === 'string' ? app : `ws://127.0.0.1:${(app.server.address() as net.AddressInfo).port}`
  const query = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined))
  const qs = query.toString()
  return `${base}/ws${qs ? `?${qs}` : ''}`
}

/** Opens a socket; resolves once open (the caller then waits for `ready`). */
export async function openWs(url: string, options: WebSocket.ClientOptions = {}): Promise<WsClient> {
  const ws = new WebSocket(url, options)
  const client = new WsClient(ws)
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused with ${res.statusCode}`)))
    ws.once('error', reject)
  })
  return client
}

/** Opens a socket and waits for its `ready` frame. */
export async function connect(app: FastifyInstance | string, token: string, params: Record<string, string | undefined> = {}): Promise<{ client: WsClient; ready: Frame }> {
  const client = await openWs(wsUrl(app, { token, ...params }))
  const ready = await client.type('ready')
  return { client, ready }
}

/** The HTTP answer to an upgrade that the server refuses. */
export async function refusedUpgrade(url: string, options: WebSocket.ClientOptions = {}): Promise<{ status: number; body: unknown }> {
  const ws = new WebSocket(url, options)
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.terminate()
      reject(new Error('the upgrade was accepted'))
    })
    ws.once('unexpected-response', (_req, res) => {
      let raw = ''
      res.on('data', (chunk: Buffer) => (raw += chunk.toString()))
      res.on('end', () => {
        let body: unknown = raw
        try {
          body = JSON.parse(raw)
        } catch {
          // not JSON: the raw text is the body
        }
        resolve({ status: res.statusCode ?? 0, body })
      })
    })
    ws.once('error', reject)
  })
}

/**
 * Waits until the event log after `since` (GET /api/v1/events, as `token`) holds the message. A POST
 * answers once the message is committed; with Redis the relay appends its event to the log a moment
 * later. A test of replay reconnects once what it missed is in the log: a reconnect in that moment
 * gets the event live, right after `ready`, rather than in the replay.
 */
export async function untilLogged(api: Api, token: string, since: string, messageId: string): Promise<void> {
  await eventually(async () => {
    const res = await api({ method: 'GET', url: `/api/v1/events?since=${since}&limit=500`, headers: bearer(token) })
    if (res.statusCode !== 200) throw new Error(`the event log answered ${res.statusCode}: ${res.body}`)
    return (res.json().events as Frame[]).some((event) => event.message?.id === messageId)
  }, `message ${messageId} in the event log after ${since}`)
}

export async function listen(app: FastifyInstance): Promise<void> {
  await app.listen({ host: '127.0.0.1', port: 0 })
}

export { freePort, serverEnv, startRedis, startServer, type ServerProcess } from '../processes.ts'
