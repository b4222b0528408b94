// A Server-Sent Events reader over real HTTP (fetch, i.e. undici) for the tests: parses the
// stream as the HTML standard says, records every event and comment, and lets a test wait for the
// one it expects. Every event must be well-formed: `data:` one JSON frame matching the published
// protocol, `event:` its type, `id:` its cursor (control frames without a cursor carry no id).
import type net from 'node:net'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { Compile } from 'typebox/compile'
import { SERVER_FRAMES } from '../../src/realtime/frames.ts'
import { assertMatchesOpenApi } from '../openapi-validator.ts'
import { bearer } from '../support/index.ts'
import { Arrivals } from './arrivals.ts'
import type { Frame } from './helpers.ts'

const SAFETY_MS = 20_000
const checkers = new Map<string, { Check: (v: unknown) => boolean; Errors: (v: unknown) => unknown[] }>(Object.entries(SERVER_FRAMES).map(([type, schema]) => [type, Compile(schema as never)]))

export interface SseEvent {
  id: string | undefined
  event: string
  data: Frame
}

export function baseUrl(app: FastifyInstance): string {
  return `http://127.0.0.1:${(app.server.address() as net.AddressInfo).port}`
}

export function streamUrl(base: string, params: Record<string, string | undefined> = {}): string {
  const query = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)).toString()
  return `${base}/api/v1/events/stream${query ? `?${query}` : ''}`
}

/** Checks a real HTTP answer against the OpenAPI document (status, content type, JSON body). */
export function assertDocumented(method: string, url: string, res: Response, body = ''): void {
  const headers = Object.fromEntries(res.headers.entries())
  const fake = { statusCode: res.status, headers, body, json: () => JSON.parse(body) as unknown } as unknown as LightMyRequestResponse
  assertMatchesOpenApi(method, new URL(url).pathname + new URL(url).search, fake)
}

export class SseClient {
  private readonly arrivals = new Arrivals<SseEvent>()
  /** Every event received, in order. */
  readonly events: SseEvent[] = this.arrivals.items
  readonly comments: string[] = []
  readonly violations: string[] = []
  /** Resolves when the server ends the stream (or the client closes it). */
  readonly ended: Promise<void>
  private commentWaiters: (() => void)[] = []

  private constructor(
    readonly response: Response,
    private readonly abort: AbortController,
  ) {
    this.ended = this.read().finally(() => this.arrivals.end(new Error('the stream ended')))
  }

  /** Opens a stream; resolves with the client once the response head arrived (any status). */
  static async open(url: string, headers: Record<string, string>): Promise<SseClient> {
    const abort = new AbortController()
    const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal })
    if (response.status !== 200) throw Object.assign(new Error(`stream refused with ${response.status}: ${await response.text()}`), { status: response.status })
    assertDocumented('GET', url, response)
    return new SseClient(response, abort)
  }

  private async read(): Promise<void> {
    const decoder = new TextDecoder()
    let buffer = ''
    let fields: { id?: string; event?: string; data: string[] } = { data: [] }
    try {
      for await (const chunk of this.response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true })
        let newline: number
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline)
          buffer = buffer.slice(newline + 1)
          if (line === '') {
            if (fields.data.length) this.dispatch(fields)
            fields = { data: [] }
          } else if (line.startsWith(':')) {
            this.comments.push(line.slice(1).trim())
            for (const w of this.commentWaiters.splice(0)) w()
          } else {
            const colon = line.indexOf(':')
            const name = colon < 0 ? line : line.slice(0, colon)
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
            if (name === 'data') fields.data.push(value)
            else if (name === 'id') fields.id = value
            else if (name === 'event') fields.event = value
            else this.violations.push(`unexpected field ${name}`)
          }
        }
      }
    } catch (error) {
      if ((error as Error).name !== 'AbortError') throw error
    }
  }

  private dispatch(fields: { id?: string; event?: string; data: string[] }): void {
    if (fields.data.length !== 1) this.violations.push(`data spread over ${fields.data.length} lines`)
    const data = JSON.parse(fields.data.join('\n')) as Frame
    const event: SseEvent = { id: fields.id, event: fields.event ?? 'message', data }
    const checker = checkers.get(String(data.type))
    if (!checker) this.violations.push(`unknown frame type ${String(data.type)}`)
    else if (!checker.Check(data)) this.violations.push(`${String(data.type)} does not match its schema: ${JSON.stringify(checker.Errors(data)[0])}`)
    if (event.event !== data.type) this.violations.push(`event: ${event.event} but data.type ${String(data.type)}`)
    if (typeof data.cursor === 'string' ? event.id !== data.cursor : event.id !== undefined) this.violations.push(`id: ${event.id} but cursor ${String(data.cursor)}`)
    this.arrivals.push(event)
  }

  /** The first event not yet taken that matches, now or when it arrives. */
  next(pred: (e: SseEvent) => boolean, what = 'event'): Promise<SseEvent> {
    if (this.violations.length) return Promise.reject(new Error(this.violations.join('; ')))
    return this.arrivals.next(pred, what)
  }

  type(type: string, pred: (f: Frame) => boolean = () => true): Promise<Frame> {
    return this.next((e) => e.event === type && pred(e.data), `${type} event`).then((e) => e.data)
  }

  /** Frames of log events (with an event_id), in order. */
  logEvents(): Frame[] {
    return this.events.map((e) => e.data).filter((f) => typeof f.event_id === 'string')
  }

  /** Resolves at the next comment line. */
  comment(): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no comment arrived')), SAFETY_MS)
      this.commentWaiters.push(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  async close(): Promise<void> {
    this.abort.abort()
    await this.ended.catch(() => {})
  }
}

/** Opens a stream and waits for its `ready` event. */
export async function openStream(base: string, token: string, params: { since?: string; lastEventId?: string } = {}): Promise<{ stream: SseClient; ready: Frame }> {
  const headers: Record<string, string> = bearer(token)
  if (params.lastEventId !== undefined) headers['last-event-id'] = params.lastEventId
  const stream = await SseClient.open(streamUrl(base, { since: params.since }), headers)
  const ready = await stream.type('ready')
  return { stream, ready }
}
