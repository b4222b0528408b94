// Streaming messages (issue 25): append, finish, cancel, Stop. A stream is started by
// POST /channels/{id}/messages with "stream": true (src/modules/messages/routes.ts).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import multipart from '@fastify/multipart'
import { assertStorable } from '../../lib/input-guard.ts'
import { AppError, badRequest } from '../../lib/errors.ts'
import type { MemberPrincipal } from '../identity/principal.ts'
import { cleanContentType, cleanFileName, removeFiles, saveUpload } from '../messages/files.ts'
import { fileTooLarge } from '../messages/routes.ts'
import type { UploadedFile } from '../messages/service.ts'
import { errors } from '../../schemas/common.ts'
import { MessageRef } from '../../schemas/message.ts'
import { ChannelMessageParams } from '../messages/schemas.ts'
import { AppendBody, AppendResult, APPENDS_PER_SECOND, FinishBody, FinishMultipart, MAX_APPEND_BYTES, MAX_BATCH_APPENDS, StreamInfo, StreamStatus, ThreadStatuses } from './schemas.ts'
import { closeLive } from './live.ts'
import * as streams from './service.ts'
import * as threadStatus from './thread-status.ts'

const member = (request: FastifyRequest): MemberPrincipal => request.principal as MemberPrincipal

const RateLimited = {
  description: '`RATE_LIMITED`: more than 50 append requests in a second on this stream; `Retry-After` gives the seconds to wait. Nothing was appended.',
  headers: { 'Retry-After': { type: 'integer', description: 'Seconds until an append is admitted again.' } },
  content: { 'application/json': { schema: { $ref: 'Error#' } } },
}

const NOT_STREAMING = 'A message that is not streaming (finished, cancelled, interrupted, or posted whole): 409 `STREAM_ENDED`. Not the author: 403; a channel or message the caller cannot see: 404.'

/** A multipart finish: an optional `text` and at most one `file`, streamed to disk as it arrives. */
async function readFinishForm(fastify: FastifyInstance, request: FastifyRequest): Promise<{ text?: string; file?: UploadedFile }> {
  let text: string | undefined
  let file: UploadedFile | undefined
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file' || file) {
          part.file.resume()
          throw badRequest("a message takes one file, in the field 'file'")
        }
        const stored = await saveUpload(fastify.config.uploadDir, part.file)
        file = { ...stored, fileName: cleanFileName(part.filename), contentType: cleanContentType(part.mimetype) }
      } else {
        if (part.fieldname !== 'text' || text !== undefined) throw badRequest(`unexpected form field '${part.fieldname}' (fields: text, file)`)
        if (part.valueTruncated) throw badRequest(`'text' is longer than ${fastify.config.maxMessageLength} characters`)
        text = String(part.value)
        assertStorable(text, "form field 'text' ")
      }
    }
  } catch (error) {
    if (file) await removeFiles(fastify.config.uploadDir, [file.storageName])
    if ((error as { code?: unknown })?.code === 'FST_REQ_FILE_TOO_LARGE') throw fileTooLarge(fastify.config.maxFileBytes)
    if (error instanceof AppError || typeof (error as { statusCode?: unknown })?.statusCode === 'number') throw error
    throw badRequest(`the multipart/form-data body is malformed: ${(error as Error)?.message ?? 'unreadable'}`)
  }
  return { text, file }
}

export default async function streamRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  fastify.addHook('onClose', async () => closeLive(fastify.ctx))

  app.post(
    '/channels/:id/messages/:message_id/stream',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'appendToStream',
        tags: ['messages'],
        summary: 'Append text to a streaming message (its agent only)',
        description: `\`{"append": "…"}\`, or \`{"appends": [...]}\` (at most ${MAX_BATCH_APPENDS}, in order). History and a late joiner read the text so far at once (the message row takes it within a second), and it reaches the channel's members as \`message_delta\` frames on WebSockets and SSE (coalesced: frames of a stream at least 80 ms apart, and no append waits longer). Limits: each append at most ${MAX_APPEND_BYTES.toLocaleString('en-US')} bytes (UTF-8) and the whole text at most MAX_MESSAGE_LENGTH characters (413 \`STREAM_TOO_LONG\`), ${APPENDS_PER_SECOND} requests per second per stream (429 \`RATE_LIMITED\`); a refused append changes nothing and the stream stays open. ${NOT_STREAMING}`,
        params: ChannelMessageParams,
        body: AppendBody,
        response: { 200: AppendResult, ...errors(400, 403, 404, 409, 413), 429: RateLimited },
      },
    },
    async (request) => {
      const body = request.body
      const appends = 'appends' in body ? body.appends : [body.append]
      return streams.appendToStream(fastify.ctx, member(request), request.params.id, request.params.message_id, appends)
    },
  )

  // A finish may attach a file, as a post does (one, multipart, streamed to disk).
  await app.register(multipart, {
    throwFileSizeLimit: true,
    limits: { fileSize: fastify.config.maxFileBytes, files: 1, fields: 1, parts: 2, fieldSize: fastify.config.maxMessageLength * 4, headerPairs: 100 },
  })

  app.post(
    '/channels/:id/messages/:message_id/stream/finish',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'finishStream',
        tags: ['messages'],
        summary: 'Finish a streaming message (its agent only)',
        description: `The message becomes \`complete\`, with \`text\` as its final text when given (\`{}\`: the text appended so far, which must not be blank unless a file comes). Attachments as a post takes them: \`multipart/form-data\` with an optional \`text\` and one \`file\` (at most 10 MiB; larger: 413 \`PAYLOAD_TOO_LARGE\`, and the stream stays open). Its mentions are resolved from the final text. Emits \`message.stream_finished\`, then \`message.created\` (webhooks and integrations receive the message once, now) and \`message.mentioned\` when it mentions others. ${NOT_STREAMING}`,
        params: ChannelMessageParams,
        body: {
          content: {
            'application/json': { schema: FinishBody },
            'multipart/form-data': { schema: FinishMultipart },
          },
        } as unknown as typeof FinishBody,
        response: { 200: MessageRef, ...errors(400, 403, 404, 409, 413) },
      },
      // A multipart body is read as a stream in the handler; give the validator an empty form.
      preValidation: async (request) => {
        if (request.isMultipart()) request.body = {}
      },
    },
    async (request) => {
      const { text, file } = request.isMultipart() ? await readFinishForm(fastify, request) : { text: request.body.text, file: undefined }
      return streams.finishStream(fastify.ctx, member(request), request.params.id, request.params.message_id, text, file)
    },
  )

  app.post(
    '/channels/:id/messages/:message_id/stream/cancel',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'cancelStream',
        tags: ['messages'],
        summary: 'Cancel a streaming message (its agent only)',
        description: `The message becomes \`cancelled\`, keeping the text written so far. Emits \`message.stream_finished\` and \`message.created\`, as a finish does. No body. ${NOT_STREAMING}`,
        params: ChannelMessageParams,
        response: { 200: MessageRef, ...errors(400, 403, 404, 409) },
      },
    },
    async (request) => streams.cancelStream(fastify.ctx, member(request), request.params.id, request.params.message_id),
  )

  app.post(
    '/channels/:id/messages/:message_id/stream/stop',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'stopStream',
        tags: ['messages'],
        summary: 'Ask the agent to stop a streaming message (people who can read the channel)',
        description:
          'Any human who can read the channel (observers included). Emits `message.stop_requested` once (a second Stop changes nothing): the streaming agent receives it on its WebSocket, SSE stream, webhook and MCP event log, and should finish or cancel the stream; without either within 30 seconds the stream becomes `interrupted`. Answers the message (still `streaming`). An agent: 403. A message that is not streaming: 409 `STREAM_ENDED`. No body.',
        params: ChannelMessageParams,
        response: { 200: MessageRef, ...errors(400, 403, 404, 409) },
      },
    },
    async (request) => streams.requestStop(fastify.ctx, member(request), request.params.id, request.params.message_id),
  )

  app.put(
    '/channels/:id/messages/:message_id/stream/status',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'setStreamStatus',
        tags: ['messages'],
        summary: 'Set what the agent is doing on its streaming message (its agent only)',
        description: `\`{title, steps: [{title, state}]}\` replaces the stream's status (states \`pending\`, \`in_progress\`, \`complete\`, \`error\`; at most 20 steps). Watchers get a \`message_status\` frame (WebSocket and SSE); the status is cleared when the stream ends. ${NOT_STREAMING}`,
        params: ChannelMessageParams,
        body: StreamStatus,
        response: { 200: StreamInfo, ...errors(400, 403, 404, 409) },
      },
    },
    async (request) => streams.setStatus(fastify.ctx, member(request), request.params.id, request.params.message_id, request.body),
  )

  app.get(
    '/channels/:id/messages/:message_id/stream',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'getStream',
        tags: ['messages'],
        summary: "A streaming message's live state: appends so far, status, Stop",
        description:
          'For a client that opens while a message streams (or reloads): the status to show beside it and whether Stop was pressed. A message that is not streaming answers its `stream_state` with `seq` 0, no status and `stop_requested` false. Readers of the channel only (404 otherwise).',
        params: ChannelMessageParams,
        response: { 200: StreamInfo, ...errors(400, 404) },
      },
    },
    async (request) => streams.streamInfo(fastify.ctx, member(request), request.params.id, request.params.message_id),
  )
  // A status on a thread without a stream (./thread-status.ts).
  const THREAD = "The message must be a thread's root (a reply: 400 `THREAD_NOT_ROOT`); a channel or message the caller cannot see: 404."
  app.put(
    '/channels/:id/messages/:message_id/thread/status',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'setThreadStatus',
        tags: ['messages'],
        summary: 'Set what the agent is doing in a thread, before it answers there (agents only)',
        description: `The same \`{title, steps}\` as a stream's status, on a thread without a stream: it replaces the agent's earlier status on this thread and reaches the channel's members as a \`thread_status\` frame (WebSocket and SSE). It is cleared by DELETE, by the agent's next reply in the thread (posted or streamed), and after STREAM_IDLE_SECONDS without a change (frame with \`status: null\`). Answers every status on the thread. A person: 403; an observer, or an agent not in the channel: 403. ${THREAD}`,
        params: ChannelMessageParams,
        body: StreamStatus,
        response: { 200: ThreadStatuses, ...errors(400, 403, 404) },
      },
    },
    async (request) => threadStatus.setThreadStatus(fastify.ctx, member(request), request.params.id, request.params.message_id, request.body),
  )

  app.delete(
    '/channels/:id/messages/:message_id/thread/status',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'clearThreadStatus',
        tags: ['messages'],
        summary: "Clear the caller's status on a thread",
        description: `Removes the caller's status on the thread (watchers get \`thread_status\` with \`status: null\`); none set: nothing changes. 204 either way. ${THREAD}`,
        params: ChannelMessageParams,
        response: { 204: Type.Null({ description: 'Cleared (or there was none).' }), ...errors(400, 404) },
      },
    },
    async (request, reply) => {
      await threadStatus.clearThreadStatus(fastify.ctx, member(request), request.params.id, request.params.message_id)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/channels/:id/messages/:message_id/thread/status',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'getThreadStatus',
        tags: ['messages'],
        summary: 'The statuses agents set on a thread',
        description: `For a client that opens a thread (or reloads): each agent's status on it, oldest set first (empty when none). Readers of the channel only. ${THREAD}`,
        params: ChannelMessageParams,
        response: { 200: ThreadStatuses, ...errors(400, 404) },
      },
    },
    async (request) => threadStatus.threadStatuses(fastify.ctx, member(request), request.params.id, request.params.message_id),
  )
}
