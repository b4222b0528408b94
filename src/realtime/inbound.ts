// Frames a client sends on its socket: `send_message` (through the same service as REST, so
// validation, access rules, events and webhooks are those of REST) and `ping`, each answered
// with `ack`, `pong` or `error` echoing the frame's id. Anything else is refused with an `error`;
// the connection stays open.
import type { FastifyInstance } from 'fastify'
import { Compile } from 'typebox/compile'
import type { RawData } from 'ws'
import { AppError } from '../lib/errors.ts'
import { inputProblem } from '../lib/input-guard.ts'
import { outageError } from '../lib/outage.ts'
import { createMessage } from '../modules/messages/service.ts'
import type { Connection } from './connection.ts'
import { PingFrame, SendMessageFrame, StreamAppendFrame, StreamCancelFrame, StreamFinishFrame, StreamStartFrame, type SendMessage } from './frames.ts'
import * as streams from '../modules/streams/service.ts'
import { encodeFrame } from './hub.ts'
import { TypingClientFrame, typingFrame } from './signals.ts'
import { isObserver } from '../modules/identity/principal.ts'

const MAX_CLIENT_ID = 128

const checkSendMessage = Compile(SendMessageFrame)
const checkPing = Compile(PingFrame)
const checkTyping = Compile(TypingClientFrame)

// Streaming messages (issue 25): each frame runs the REST route's service call; the answer is an
// `ack` with the message (start, finish, cancel) or a `stream_ack` (append).
type StreamFrame = { type: string; channel_id: string; message_id?: string; text?: string; thread_id?: string; in_reply_to_event?: string; append?: string; appends?: string[] }
const STREAM_FRAMES = {
  stream_start: Compile(StreamStartFrame),
  stream_append: Compile(StreamAppendFrame),
  stream_finish: Compile(StreamFinishFrame),
  stream_cancel: Compile(StreamCancelFrame),
} as const
const isStreamFrame = (type: unknown): type is keyof typeof STREAM_FRAMES => typeof type === 'string' && Object.hasOwn(STREAM_FRAMES, type)

/** How a client frame is named in the answers to it: `id`, and `client_id` when the client used that. */
interface Echo {
  id: string | null
  client_id?: string
}

const readableId = (value: unknown): string | undefined => (typeof value === 'string' && value.length >= 1 && value.length <= MAX_CLIENT_ID ? value : undefined)

/** Read from any parsed frame, valid or not, so that even a refusal names the frame it answers. */
function echoOf(body: unknown): Echo {
  if (typeof body !== 'object' || body === null) return { id: null }
  const { id, client_id: clientId } = body as { id?: unknown; client_id?: unknown }
  const echoed = readableId(clientId)
  return echoed === undefined ? { id: readableId(id) ?? null } : { id: readableId(id) ?? echoed, client_id: echoed }
}

export const sendJson = (conn: Connection, frame: unknown): void => conn.send(encodeFrame(frame))

const sendError = (conn: Connection, echo: Echo, code: string, error: string, retryAfter?: string): void =>
  sendJson(conn, { type: 'error', ...echo, code, error, ...(retryAfter ? { retry_after: Number(retryAfter) } : {}) })

/** The handler of a socket's `message` events. */
export function inboundFrames(app: FastifyInstance): (conn: Connection, data: RawData, isBinary: boolean) => void {
  const perSecond = app.config.wsMessagesPerSecond

  async function sendMessage(conn: Connection, frame: SendMessage, echo: Echo): Promise<void> {
    try {
      // The frame's id is its idempotency key (24 h, per sender): a client that resends a frame
      // after a reconnect gets the original message back instead of a second one.
      const idempotencyKey = echo.id === null ? undefined : `ws:${echo.id}`
      const result = await createMessage(app.ctx, conn.principal, frame.channel_id, {
        text: frame.text,
        idempotencyKey,
        inReplyToEvent: frame.in_reply_to_event,
        mentions: frame.mentions,
        threadId: frame.thread_id,
        // A socket hears its channels: a post over it may be an answer (the loop guard's turns).
        overSocket: true,
      })
      sendJson(conn, { type: 'ack', ...echo, message: result.body })
    } catch (error) {
      if (error instanceof AppError) return sendError(conn, echo, error.code, error.message, error.headers?.['retry-after'])
      const outage = outageError(error)
      if (outage) return sendError(conn, echo, outage.code, outage.message)
      app.log.error({ err: error }, 'send_message failed')
      sendError(conn, echo, 'INTERNAL_ERROR', 'internal server error')
    }
  }

  async function streamFrame(conn: Connection, frame: StreamFrame, echo: Echo): Promise<void> {
    try {
      const p = conn.principal
      const messageId = frame.message_id ?? ''
      switch (frame.type) {
        case 'stream_start': {
          const message = await streams.startStream(app.ctx, p, frame.channel_id, { text: frame.text, threadId: frame.thread_id, inReplyToEvent: frame.in_reply_to_event })
          return sendJson(conn, { type: 'ack', ...echo, message })
        }
        case 'stream_append': {
          if ((frame.append === undefined) === (frame.appends === undefined)) return sendError(conn, echo, 'VALIDATION_ERROR', 'invalid stream_append: give append or appends, not both')
          const done = await streams.appendToStream(app.ctx, p, frame.channel_id, messageId, frame.appends ?? [frame.append!])
          return sendJson(conn, { type: 'stream_ack', ...echo, ...done })
        }
        case 'stream_finish':
          return sendJson(conn, { type: 'ack', ...echo, message: await streams.finishStream(app.ctx, p, frame.channel_id, messageId, frame.text) })
        default:
          return sendJson(conn, { type: 'ack', ...echo, message: await streams.cancelStream(app.ctx, p, frame.channel_id, messageId) })
      }
    } catch (error) {
      if (error instanceof AppError) return sendError(conn, echo, error.code, error.message, error.headers?.['retry-after'])
      const outage = outageError(error)
      if (outage) return sendError(conn, echo, outage.code, outage.message)
      app.log.error({ err: error }, `${frame.type} failed`)
      sendError(conn, echo, 'INTERNAL_ERROR', 'internal server error')
    }
  }

  return function onFrame(conn, data, isBinary) {
    const raw = isBinary ? null : (data as Buffer).toString() // ws hands messages over as one Buffer (binaryType nodebuffer)
    let body: unknown
    try {
      body = raw === null ? undefined : JSON.parse(raw)
    } catch {
      body = undefined
    }
    const echo = echoOf(body)
    if (!conn.allowFrame(Date.now())) {
      return sendError(conn, echo, 'RATE_LIMITED', `at most ${perSecond} messages per second per connection`)
    }
    if (raw === null) return sendError(conn, { id: null }, 'VALIDATION_ERROR', 'frames are JSON text, not binary')
    if (body === undefined) return sendError(conn, { id: null }, 'INVALID_JSON', 'the frame is not valid JSON')
    const type = typeof body === 'object' && body !== null && 'type' in body ? body.type : undefined
    if (type === 'send_message') {
      if (!checkSendMessage.Check(body)) {
        const first = checkSendMessage.Errors(body)[0]
        const where = first?.instancePath ? `${first.instancePath.slice(1)}: ` : ''
        return sendError(conn, echo, 'VALIDATION_ERROR', `invalid send_message: ${where}${first?.message ?? 'invalid frame'}`)
      }
      const problem = inputProblem(body)
      if (problem) return sendError(conn, echo, 'VALIDATION_ERROR', `invalid send_message: ${problem}`)
      const frame = body // narrowed by the check above; a closure would not keep the narrowing of `body`
      conn.queue = conn.queue.then(() => sendMessage(conn, frame, echo))
      return
    }
    if (type === 'typing') {
      if (!checkTyping.Check(body)) return sendError(conn, echo, 'VALIDATION_ERROR', 'invalid typing frame: channel_id must be a channel id')
      const channelId = (body as { channel_id: string }).channel_id
      // Membership as the hub knows it now (no database round trip): a channel one is not in is
      // not found, as over REST.
      if (!app.realtime.hub.isMemberOf(conn.memberId, channelId)) return sendError(conn, echo, 'NOT_FOUND', 'channel not found')
      if (isObserver(conn.principal)) return sendError(conn, echo, 'FORBIDDEN', 'observers can read but not post')
      if (!conn.typing.allow(channelId, Date.now())) return // extras are dropped silently
      app.realtime.signals.publish({ channelIds: [channelId], except: conn.memberId, frame: typingFrame(conn.principal, channelId) })
      return
    }
    if (isStreamFrame(type)) {
      const check = STREAM_FRAMES[type]
      if (!check.Check(body)) {
        const first = check.Errors(body)[0]
        const where = first?.instancePath ? `${first.instancePath.slice(1)}: ` : ''
        return sendError(conn, echo, 'VALIDATION_ERROR', `invalid ${type}: ${where}${first?.message ?? 'invalid frame'}`)
      }
      const problem = inputProblem(body)
      if (problem) return sendError(conn, echo, 'VALIDATION_ERROR', `invalid ${type}: ${problem}`)
      const frame = body as StreamFrame
      // Queued behind the socket's other frames: appends are stored in the order sent.
      conn.queue = conn.queue.then(() => streamFrame(conn, frame, echo))
      return
    }
    if (type === 'ping') {
      if (!checkPing.Check(body)) return sendError(conn, echo, 'VALIDATION_ERROR', 'invalid ping frame')
      return sendJson(conn, { type: 'pong', ...echo })
    }
    sendError(conn, echo, 'VALIDATION_ERROR', 'unknown frame type; expected send_message, typing, ping, stream_start, stream_append, stream_finish or stream_cancel')
  }
}
