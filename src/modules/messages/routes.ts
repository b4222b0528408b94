// Messages in a channel (JSON or multipart with one file), their files, and full-text search.
import multipart from '@fastify/multipart'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { AppError, badRequest } from '../../lib/errors.ts'
import { idempotencyKeyOf, IDEMPOTENCY_HEADER } from '../idempotency/service.ts'
import { assertStorable } from '../../lib/input-guard.ts'
import type { MemberPrincipal } from '../identity/principal.ts'
import { errors, IdParams } from '../../schemas/common.ts'
import { cleanContentType, cleanFileName, contentDisposition, ensureUploadDir, removeFiles, saveUpload } from './files.ts'
import {
  AttachmentParams,
  ChannelMessageParams,
  EditMessageBody,
  ListChannelMessagesQuery,
  ListMessagesQuery,
  LoopOrRateLimited,
  MAX_EXPLICIT_MENTIONS,
  MESSAGE_PAGE_DEFAULT,
  MessagePageSchema,
  PostMessageBody,
  PostMessageMultipart,
  SEARCH_PAGE_DEFAULT,
  SearchQuery,
  SearchResultSchema,
} from './schemas.ts'
import { MessageRef } from '../../schemas/message.ts'
import * as messages from './service.ts'
import * as streams from '../streams/service.ts'
import type { UploadedFile } from './service.ts'
import type { ApprovalRequest } from '../approvals/schemas.ts'

const NoContent = Type.Null({ description: 'Done; no body.' })

const IdempotencyHeaders = Type.Object(
  {
    [IDEMPOTENCY_HEADER]: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description:
          'Retry-safe posting: a retry with the same key and body within 24 h returns the original 201 response and creates nothing; the same key with another body is 409 `IDEMPOTENCY_KEY_REUSED`.',
      }),
    ),
  },
  { additionalProperties: true },
)

const member = (request: FastifyRequest): MemberPrincipal => request.principal as MemberPrincipal

/**
 * The multipart parser (busboy) reports a body that is not multipart at all, or is cut short, as
 * a plain Error ("Unexpected end of form", "Malformed part header"...): that is the client's
 * fault, a 400. Errors that already carry a status (AppError, the size limits) pass unchanged.
 */
function malformedMultipart(error: unknown): unknown {
  if (error instanceof AppError || typeof (error as { statusCode?: unknown })?.statusCode === 'number') return error
  if (typeof (error as { code?: unknown })?.code === 'string' && String((error as { code: string }).code).startsWith('FST_')) return error
  return badRequest(`the multipart/form-data body is malformed: ${(error as Error)?.message ?? 'unreadable'}`)
}

/**
 * The limit in exact bytes, and in MiB only when that is exact too: "10 MB" for both the limit and
 * an 11,000,000-byte file said nothing (issue 24). The upload is cut at the limit, so its own size
 * is unknown here: a client that has the file (a browser) states it.
 */
export function fileTooLarge(maxBytes: number): AppError {
  const mib = maxBytes / (1024 * 1024)
  const inMib = Number.isInteger(mib) ? ` (${mib} MiB)` : ''
  return new AppError('PAYLOAD_TOO_LARGE', `the file is larger than ${maxBytes.toLocaleString('en-US')} bytes${inMib}, the most a message may carry`)
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Reads a multipart post: the `text` field and at most one `file`, streamed to disk as it arrives. */
async function readMultipart(fastify: FastifyInstance, request: FastifyRequest): Promise<{ text: string; file?: UploadedFile; inReplyToEvent?: string; mentions?: string[]; threadId?: string }> {
  let text: string | undefined
  let inReplyToEvent: string | undefined
  let mentions: string[] | undefined
  let threadId: string | undefined
  let file: UploadedFile | undefined
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file' || file) {
          part.file.resume()
          throw badRequest("a message takes one file, in the field 'file'")
        }
        const stored = await saveUpload(fastify.config.uploadDir, part.file)
        file = { storageName: stored.storageName, size: stored.size, sha256: stored.sha256, fileName: cleanFileName(part.filename), contentType: cleanContentType(part.mimetype) }
      } else if (part.fieldname === 'in_reply_to_event' && inReplyToEvent === undefined) {
        inReplyToEvent = String(part.value)
        if (!UUID_RE.test(inReplyToEvent)) throw badRequest("form field 'in_reply_to_event' must be an event id (a UUID)")
      } else if (part.fieldname === 'thread_id' && threadId === undefined) {
        threadId = String(part.value)
        if (!UUID_RE.test(threadId)) throw badRequest("form field 'thread_id' must be a message id (a UUID)")
      } else if (part.fieldname === 'mentions') {
        mentions = [...(mentions ?? []), ...mentionIds(String(part.value))]
      } else {
        if (part.fieldname !== 'text' || text !== undefined) throw badRequest(`unexpected form field '${part.fieldname}' (fields: text, file, in_reply_to_event, mentions, thread_id)`)
        if (part.valueTruncated) throw badRequest(`'text' is longer than ${fastify.config.maxMessageLength} characters`)
        text = String(part.value)
        assertStorable(text, "form field 'text' ")
      }
    }
  } catch (error) {
    if (file) await removeFiles(fastify.config.uploadDir, [file.storageName])
    if ((error as { code?: unknown })?.code === 'FST_REQ_FILE_TOO_LARGE') throw fileTooLarge(fastify.config.maxFileBytes)
    throw malformedMultipart(error)
  }
  if (text === undefined && !file) throw badRequest("the form needs a 'text' field, a 'file', or both")
  return { text: text ?? '', file, inReplyToEvent, mentions, threadId }
}

/** The ids of a multipart `mentions` field: comma-separated UUIDs (at most MAX_EXPLICIT_MENTIONS in all). */
function mentionIds(value: string): string[] {
  const ids = value
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean)
  if (ids.some((id) => !UUID_RE.test(id))) throw badRequest("form field 'mentions' must be comma-separated member ids (UUIDs)")
  return ids
}

export default async function messagesRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  await ensureUploadDir(fastify.config.uploadDir)
  await app.register(multipart, {
    throwFileSizeLimit: true,
    limits: {
      fileSize: fastify.config.maxFileBytes,
      files: 1,
      // text, in_reply_to_event, thread_id, and `mentions` (which may repeat).
      fields: 4 + MAX_EXPLICIT_MENTIONS,
      parts: 5 + MAX_EXPLICIT_MENTIONS,
      // Bytes: a character takes at most 4 in UTF-8.
      fieldSize: fastify.config.maxMessageLength * 4,
      headerPairs: 100,
    },
  })

  /** Both post routes: the input read from JSON or from the form, then one service call. */
  async function post(
    request: FastifyRequest,
    reply: FastifyReply,
    channelId: string,
    input: { text: string; file?: UploadedFile; inReplyToEvent?: string; mentions?: string[]; threadId?: string; approval?: ApprovalRequest },
  ): Promise<FastifyReply> {
    if ((input.mentions?.length ?? 0) > MAX_EXPLICIT_MENTIONS) throw badRequest(`at most ${MAX_EXPLICIT_MENTIONS} ids in 'mentions'`)
    const result = await messages.createMessage(fastify.ctx, member(request), channelId, { ...input, idempotencyKey: idempotencyKeyOf(request) })
    // A replay answers with the remembered status (always the original 201) and body.
    return reply.code(result.statusCode).send(result.body)
  }

  app.post(
    '/channels/:id/messages',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'postMessage',
        tags: ['messages'],
        summary: 'Post a message (JSON text, or multipart text + one file)',
        description:
          'Members only (observers: 403); the workspace owner may post in any regular channel, and its first post there makes it a member. JSON `{text}` (optionally `mentions`: member ids to mention besides the `@name` tokens of the text; non-members are ignored), or `multipart/form-data` with `text` and `file` (one file, at most 10 MiB, streamed to disk; larger: 413 `PAYLOAD_TOO_LARGE` and nothing stored). With a file the text may be empty. Emits `message.created`, and `message.mentioned` when it mentions members other than its author. Send `Idempotency-Key` to make retries safe. Streaming (agents only): `"stream": true` starts a message in state `streaming` and emits `message.stream_started` instead (`message.created` comes once, when it ends; docs/realtime.md, "Streaming messages"); a human: 403; 10 streaming at once: 409 `TOO_MANY_STREAMS`; not with `approval` (400). Loop protection (docs/loops.md): a post by an agent answers 429 `LOOP_DETECTED` with `Retry-After` when it would be one turn too many here (agents answering each other: more than `loop_guard_max_turns` turns of one pair of listening agents within `loop_guard_window_seconds`, no human message in between; one agent posting any number in a row is never refused), or when its `in_reply_to_event` chain would exceed `loop_guard_max_depth`. Threads: `thread_id` posts a reply in the thread of a root message of this channel (one level: a reply to a reply is 400 `THREAD_NOT_ROOT`; a message not in this channel is 404); the root\'s `reply_count`, `last_reply_at` and `recent_replier_ids` are updated with it, and the loop guard counts the reply in its thread. Approval (docs/approvals.md): an agent\'s JSON post may carry `approval` (`action`, `arguments`, `summary`, `choices`, `approvers`, `expires_in`, `on_expiry`); the message then carries the request and its state, and people decide it with `decideApproval`. A human sending `approval`: 403.',
        params: IdParams,
        headers: IdempotencyHeaders,
        body: {
          content: {
            'application/json': { schema: PostMessageBody },
            'multipart/form-data': { schema: PostMessageMultipart },
          },
        } as unknown as typeof PostMessageBody,
        response: { 201: MessageRef, ...errors(400, 403, 404, 409, 413, 415), 429: LoopOrRateLimited },
      },
      // A multipart body is read as a stream in the handler; give the validator an empty form.
      preValidation: async (request) => {
        if (request.isMultipart()) request.body = {} as never
      },
    },
    async (request, reply) => {
      const body = request.body
      if (!request.isMultipart() && body.stream === true) {
        if (body.approval !== undefined) throw badRequest("'approval' is not taken with 'stream': an approval request is posted whole")
        if (body.mentions !== undefined) throw badRequest("'mentions' is not taken with 'stream': the final text's @name tokens are resolved when the stream finishes")
        if (idempotencyKeyOf(request) !== undefined) throw badRequest(`'${IDEMPOTENCY_HEADER}' is not taken with 'stream' (a stream is started once; its appends carry sequence numbers)`)
        const message = await streams.startStream(fastify.ctx, member(request), request.params.id, { text: body.text, threadId: body.thread_id, inReplyToEvent: body.in_reply_to_event })
        return reply.code(201).send(message)
      }
      const input = request.isMultipart()
        ? await readMultipart(fastify, request)
        : { text: body.text, inReplyToEvent: body.in_reply_to_event, mentions: body.mentions, threadId: body.thread_id, approval: body.approval }
      return post(request, reply, request.params.id, input)
    },
  )

  // The same post, multipart only, under its own operation: generators that read one content type
  // per operation (hey-api takes the first) reach the upload through it, with a typed body.
  app.post(
    '/channels/:id/messages/upload',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'postMessageWithFile',
        tags: ['messages'],
        summary: 'Post a message with a file (multipart text + one file)',
        description:
          'Exactly `POST /api/v1/channels/{id}/messages` with a `multipart/form-data` body (`text`, `file`, and optionally `mentions`, `thread_id`, `in_reply_to_event`), for client generators that read one request content type per operation. Any other Content-Type: 415 `UNSUPPORTED_MEDIA_TYPE`. Same rules, events, idempotency and limits as `postMessage`.',
        params: IdParams,
        headers: IdempotencyHeaders,
        body: { content: { 'multipart/form-data': { schema: PostMessageMultipart } } } as unknown as typeof PostMessageMultipart,
        response: { 201: MessageRef, ...errors(400, 403, 404, 409, 413, 415), 429: LoopOrRateLimited },
      },
      preValidation: async (request) => {
        if (!request.isMultipart()) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'this endpoint takes multipart/form-data (JSON posts go to POST /api/v1/channels/{id}/messages)')
        request.body = {}
      },
    },
    async (request, reply) => post(request, reply, request.params.id, await readMultipart(fastify, request)),
  )

  app.get(
    '/channels/:id/messages',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'listMessages',
        tags: ['messages'],
        summary: 'List messages, newest first, with cursors',
        description:
          'Without a cursor: the newest `limit` messages. `before=<message id>`: the next older page. `after=<message id>`: the `limit` messages just newer than it (still newest first). Walk back with `next_before` while `has_more`; walk forward with `next_after` while `has_more`. `before` and `after` together: 400 `INVALID_CURSOR`. `threads=roots` leaves thread replies out (a thread is read with `listReplies`); the default `all` lists them too.',
        params: IdParams,
        querystring: ListChannelMessagesQuery,
        response: { 200: MessagePageSchema, ...errors(400, 404) },
      },
    },
    async (request) => messages.listMessages(fastify.ctx, member(request), request.params.id, { ...request.query, limit: request.query.limit ?? MESSAGE_PAGE_DEFAULT }),
  )

  app.get(
    '/channels/:id/messages/:message_id/replies',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'listReplies',
        tags: ['messages'],
        summary: "List a thread's replies, newest first, with cursors",
        description:
          "The replies to the root message `message_id`, with the same `limit`, `before` and `after` as the channel's list. Readers of the channel only (404 otherwise, as for an unknown message); the root of a thread is a message of the channel (a deleted root with replies is still listed, as a placeholder). A message that is itself a reply: 400 `THREAD_NOT_ROOT`. A root without replies gives an empty page.",
        params: ChannelMessageParams,
        querystring: ListMessagesQuery,
        response: { 200: MessagePageSchema, ...errors(400, 404) },
      },
    },
    async (request) => messages.listReplies(fastify.ctx, member(request), request.params.id, request.params.message_id, { ...request.query, limit: request.query.limit ?? MESSAGE_PAGE_DEFAULT }),
  )

  app.get(
    '/channels/:id/messages/:message_id',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'getMessage',
        tags: ['messages'],
        summary: 'Get one message',
        params: ChannelMessageParams,
        response: { 200: MessageRef, ...errors(400, 404) },
      },
    },
    async (request) => messages.getMessage(fastify.ctx, member(request), request.params.id, request.params.message_id),
  )

  app.patch(
    '/channels/:id/messages/:message_id',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'editMessage',
        tags: ['messages'],
        summary: 'Edit a message (its author only)',
        description:
          'Sets `edited_at`. Emits `message.updated`. Mentions are resolved again from the new text; members mentioned for the first time get `message.mentioned`. An approval request cannot be edited while it is pending: 409 `CONFLICT` (docs/approvals.md).',
        params: ChannelMessageParams,
        body: EditMessageBody,
        response: { 200: MessageRef, ...errors(400, 403, 404, 409) },
      },
    },
    async (request) => messages.editMessage(fastify.ctx, member(request), request.params.id, request.params.message_id, request.body.text, request.body.mentions),
  )

  app.delete(
    '/channels/:id/messages/:message_id',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'deleteMessage',
        tags: ['messages'],
        summary: 'Delete a message (its author or an admin)',
        description: 'Its file is removed from disk. Emits `message.deleted`.',
        params: ChannelMessageParams,
        response: { 204: NoContent, ...errors(400, 403, 404) },
      },
    },
    async (request, reply) => {
      await messages.deleteMessage(fastify.ctx, member(request), request.params.id, request.params.message_id)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/attachments/:id',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'downloadAttachment',
        tags: ['messages'],
        summary: "Download a message's file (members of its channel only)",
        description:
          'Always served as `application/octet-stream` with `Content-Disposition: attachment` (the original name, ASCII fallback plus RFC 5987 UTF-8) and `X-Content-Type-Options: nosniff`, so an upload can never run as a page of this origin. The declared type is in the message object.',
        params: AttachmentParams,
        response: {
          200: { description: 'The file.', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
          ...errors(400, 404),
        },
      },
    },
    async (request, reply) => {
      const file = await messages.openAttachment(fastify.ctx, member(request), request.params.id)
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', String(file.size))
        .header('content-disposition', contentDisposition(file.fileName))
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('cache-control', 'private, no-store')
        .send(file.stream as never) // a stream body; the typed reply only knows the schema's string
    },
  )

  app.get(
    '/messages/search',
    {
      config: { auth: 'any' },
      schema: {
        operationId: 'searchMessages',
        tags: ['messages'],
        summary: 'Full-text search in the channels the caller may read',
        description:
          "PostgreSQL full-text search (English stemming, `websearch_to_tsquery` syntax) over every channel the caller may read: the channels and DMs it belongs to and, for the workspace owner, every regular channel too (never other people's DMs; docs/access.md). The newest 200 matches are ranked by `ts_rank` and the best `limit` of them returned, best first (ties newest first), each hit with a highlighted snippet: a query matching fewer than 200 messages is ranked whole, a common word gives the most relevant of its recent matches (docs/decisions.md). `channel_id` narrows to one channel (404 if the caller cannot read it). `q` missing or blank: 400.",
        querystring: SearchQuery,
        response: { 200: SearchResultSchema, ...errors(400, 404) },
      },
    },
    async (request) => messages.search(fastify.ctx, member(request), { ...request.query, limit: request.query.limit ?? SEARCH_PAGE_DEFAULT }),
  )
}
