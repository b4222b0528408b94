// Events over plain HTTP, for agents that cannot hold a WebSocket (behind proxies, in serverless
// functions): Server-Sent Events streams (src/realtime/sse.ts) and long polls
// (src/realtime/long-poll.ts). Both are subscribers of the WebSocket's hub. This plugin keeps the
// open ones and applies the rules the gateway applies to sockets:
// - bounded per caller (agent or user) on each instance: SSE_MAX_STREAMS_PER_CALLER streams and
//   EVENTS_MAX_WAITS_PER_CALLER long polls; one more answers 429 RATE_LIMITED with Retry-After;
// - credentials re-checked every WS_AUTH_RECHECK_MS: a revoked key, a removed account or an
//   expired JWT ends the stream (after an `error` event, UNAUTHORIZED) and answers the long poll 401;
// - a keep-alive comment on every stream every SSE_KEEPALIVE_MS;
// - on shutdown, streams end and long polls answer at once (both with `Connection: close`),
//   before the drain of open connections (src/plugins/shutdown.ts) waits for them to close.
import type { OutgoingHttpHeaders } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Gauge } from 'prom-client'
import type { EventFilter } from '../events/filter.ts'
import { AppError } from '../lib/errors.ts'
import { withTimeout } from '../lib/timeout.ts'
import { bearer, heldCredential } from '../plugins/auth.ts'
import { recheckEvery, revokedHolders, type HeldCredential } from '../modules/identity/held.ts'
import type { MemberPrincipal } from '../modules/identity/principal.ts'
import type { Cursor } from './cursor.ts'
import { LongPoll } from './long-poll.ts'
import { EventStream, SSE_HEADERS, startStream } from './sse.ts'

const READER_WAIT_MS = 3_000
const RETRY_AFTER_SECONDS = '1'

export interface EventStreams {
  /** The caller of an authenticated request, as the re-check needs it. */
  credentialOf(request: FastifyRequest): HeldCredential
  /** Answers the request with an event stream (the reply is hijacked once the head is sent). */
  stream(request: FastifyRequest, reply: FastifyReply, since: Cursor | undefined, filter?: EventFilter): Promise<void>
  /** Registers a long poll with the hub (woken only by events that pass `filter`); `release` it when the request answers. */
  park(credential: HeldCredential, filter?: EventFilter): Promise<LongPoll>
  release(poll: LongPoll): void
  /** True once the server is shutting down. */
  readonly stopping: boolean
  readonly open: { streams: number; polls: number }
}

declare module 'fastify' {
  interface FastifyInstance {
    eventStreams: EventStreams
  }
}

const unavailable = (cause: unknown): AppError =>
  new AppError('SERVICE_UNAVAILABLE', 'the event log is temporarily unavailable; retry later', { cause, headers: { 'retry-after': RETRY_AFTER_SECONDS } })

const shuttingDown = (): AppError =>
  new AppError('SERVICE_UNAVAILABLE', 'the server is shutting down; retry on another connection', { headers: { 'retry-after': RETRY_AFTER_SECONDS, connection: 'close' } })

/** Counts what each caller holds, and refuses one more than the limit. */
class PerCaller {
  private readonly counts = new Map<string, number>()

  constructor(
    private readonly limit: number,
    private readonly what: string,
    private readonly setting: string,
  ) {}

  take(memberId: string): void {
    const n = this.counts.get(memberId) ?? 0
    if (n >= this.limit) {
      throw new AppError('RATE_LIMITED', `at most ${this.limit} ${this.what} per caller at once (${this.setting}); close one first`, {
        headers: { 'retry-after': RETRY_AFTER_SECONDS },
      })
    }
    this.counts.set(memberId, n + 1)
  }

  give(memberId: string): void {
    const n = (this.counts.get(memberId) ?? 1) - 1
    if (n > 0) this.counts.set(memberId, n)
    else this.counts.delete(memberId)
  }
}

async function httpEventsPlugin(app: FastifyInstance): Promise<void> {
  const { config } = app
  const streams = new Set<EventStream>()
  const polls = new Set<LongPoll>()
  const streamSlots = new PerCaller(config.sseMaxStreamsPerCaller, 'event streams', 'SSE_MAX_STREAMS_PER_CALLER')
  const pollSlots = new PerCaller(config.eventsMaxWaitsPerCaller, 'waiting requests (long polls)', 'EVENTS_MAX_WAITS_PER_CALLER')
  let stopping = false

  function credentialOf(request: FastifyRequest): HeldCredential {
    return heldCredential(app, request.principal as MemberPrincipal, bearer(request))
  }

  /** Registers a subscriber with the hub and waits for this instance's log reader. */
  async function subscribe(client: EventStream['subscriber']): Promise<void> {
    const { hub, broker } = app.realtime
    await hub.add(client)
    try {
      await withTimeout(broker.reading(), READER_WAIT_MS, 'the event log reader is not running')
    } catch (error) {
      throw unavailable(error)
    }
  }

  async function stream(request: FastifyRequest, reply: FastifyReply, since: Cursor | undefined, filter: EventFilter = {}): Promise<void> {
    if (stopping) throw shuttingDown()
    const credential = credentialOf(request)
    const memberId = credential.principal.id
    streamSlots.take(memberId)
    const { hub, broker } = app.realtime
    const stream = new EventStream(credential, reply.raw, config.wsMaxBufferedBytes, () => request.log.warn({ memberId }, 'event stream client too slow; disconnected'), filter)
    let released = false
    const release = (): void => {
      if (released) return
      released = true
      streams.delete(stream)
      hub.remove(stream.subscriber)
      streamSlots.give(memberId)
    }
    reply.raw.once('close', release)

    let info
    try {
      await subscribe(stream.subscriber)
      info = await broker.info().catch((error: unknown) => Promise.reject(unavailable(error)))
      if (stopping) throw shuttingDown()
    } catch (error) {
      release()
      throw error
    }
    reply.hijack()
    if (!stream.open) return release() // the client left while the stream was being prepared
    // The stream owns its connection: when it ends, the connection closes, and a client that
    // reconnects (EventSource does, with Last-Event-ID) opens a fresh one.
    stream.begin({ ...(reply.getHeaders() as OutgoingHttpHeaders), ...SSE_HEADERS, connection: 'close' })
    // Only now is it open: keep-alives, shutdown and revocation reach streams whose head is out.
    streams.add(stream)
    try {
      await startStream(stream, broker, hub, info, since)
    } catch (error) {
      request.log.warn({ err: error }, 'event stream catch-up failed; closing')
      stream.end('the event log is unavailable; reconnect later')
    }
  }

  async function park(credential: HeldCredential, filter: EventFilter = {}): Promise<LongPoll> {
    if (stopping) throw shuttingDown()
    const memberId = credential.principal.id
    pollSlots.take(memberId)
    const poll = new LongPoll(credential, app.realtime.hub, filter)
    polls.add(poll)
    try {
      await subscribe(poll.subscriber)
    } catch (error) {
      release(poll)
      throw error
    }
    if (stopping) poll.end('closed')
    return poll
  }

  function release(poll: LongPoll): void {
    if (!polls.delete(poll)) return
    app.realtime.hub.remove(poll.subscriber)
    pollSlots.give(poll.credential.principal.id)
  }

  // A revoked key, a deleted agent or user, or an expired JWT ends its streams and long polls.
  async function recheckCredentials(): Promise<void> {
    for (const holder of await revokedHolders(app.db.pool, [...streams, ...polls])) {
      if (holder instanceof LongPoll) holder.end('revoked')
      else holder.end({ type: 'error', id: null, code: 'UNAUTHORIZED', error: 'credential revoked or expired' })
    }
  }

  const timers: NodeJS.Timeout[] = []
  if (app.background) {
    timers.push(
      setInterval(() => {
        for (const stream of streams) stream.comment('keep-alive')
      }, config.sseKeepaliveMs).unref(),
    )
    timers.push(recheckEvery(config.wsAuthRecheckMs, recheckCredentials, (error) => app.log.warn({ err: error }, 'credential re-check of event streams failed')))
  }

  app.addHook('preClose', async () => {
    stopping = true
    for (const timer of timers) clearInterval(timer)
    for (const stream of streams) stream.end('server shutting down; reconnect with Last-Event-ID')
    for (const poll of polls) poll.end('closed')
  })

  new Gauge({
    name: 'ams_event_streams_open',
    help: 'Open Server-Sent Events streams (GET /api/v1/events/stream) on this instance',
    registers: [app.metrics.registry],
    collect() {
      this.set(streams.size)
    },
  })
  new Gauge({
    name: 'ams_event_long_polls_waiting',
    help: 'Long polls (GET /api/v1/events?wait=) waiting on this instance',
    registers: [app.metrics.registry],
    collect() {
      this.set(polls.size)
    },
  })

  app.decorate('eventStreams', {
    credentialOf,
    stream,
    park,
    release,
    get stopping() {
      return stopping
    },
    get open() {
      return { streams: streams.size, polls: polls.size }
    },
  })
}

export default fp(httpEventsPlugin, { name: 'http-events', dependencies: ['auth', 'metrics'] })
