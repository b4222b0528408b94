// Messages: post (JSON or with one file), list with cursors, edit, delete, search, download.
// `createMessage` is also called by the WebSocket gateway, the integration inbound endpoint and
// the MCP tools, so every path shares the same validation, access rules, loop protection
// (loop-guard.ts) and `message.created` event.
import type { ServiceContext } from '../context.ts'
import { newEvent } from '../../events/bus.ts'
import { AppError, badRequest, forbidden, notFound } from '../../lib/errors.ts'
import { uuidv7, uuidv7Time } from '../../lib/ids.ts'
import { isObserver, isOwner, type MemberPrincipal } from '../identity/principal.ts'
import { assertCanPost, isAdmin, joinsOnPost, readableChannel } from '../channels/access.ts'
import { joinOnPost } from '../channels/service.ts'
import { requestHash, withIdempotentInsert, type StoredResponse } from '../idempotency/service.ts'
import type { ListMentionsInput, MentionPage } from '../mentions/schemas.ts'
import { addressedEdit, addressedPost } from '../inbox/addressed.ts'
import { mentionsForEdit, mentionsForPost } from '../mentions/service.ts'
import { loopGuardSettings } from '../workspace/settings.ts'
import { openFile, removeFiles } from './files.ts'
import * as loopGuard from './loop-guard.ts'
import * as repo from './repo.ts'
import { messageRecord } from './read-model.ts'
import { postgresSearch, searchScope } from './search-repo.ts'
import { withReactions } from '../reactions/service.ts'
import { prepareRequest, refusesEdit } from '../approvals/service.ts'
import type { ApprovalRequest } from '../approvals/schemas.ts'
import type { SearchEngine } from './search-engine.ts'
import { withLiveText } from '../streams/live.ts'
import { clearOnReply } from '../streams/thread-status.ts'
import { MessageSchema, toMessageDto, type MessageDto } from '../../schemas/message.ts'
import type { ListMessagesQueryInput, MessagePage, SearchQueryInput, SearchResult } from './schemas.ts'

export interface UploadedFile {
  storageName: string
  fileName: string
  contentType: string
  size: number
  sha256: string
}

/** Text rules: at most maxMessageLength characters; blank only when a file is attached. */
export function validateText(ctx: ServiceContext, text: string, hasFile: boolean): void {
  if (typeof text !== 'string') throw badRequest("'text' must be a string")
  // .length counts UTF-16 units, never fewer than characters: count code points only when needed.
  if (text.length > ctx.config.maxMessageLength && [...text].length > ctx.config.maxMessageLength) {
    throw badRequest(`'text' is longer than ${ctx.config.maxMessageLength} characters`)
  }
  if (!hasFile && text.trim() === '') throw badRequest("'text' must not be empty (it may be empty only when a file is attached)")
}

/** Posts a message as `author` (REST JSON, WebSocket, integrations). */
export async function postMessage(
  ctx: ServiceContext,
  author: MemberPrincipal,
  channelId: string,
  input: { text: string; inReplyToEvent?: string; mentions?: string[]; threadId?: string },
): Promise<MessageDto> {
  const result = await createMessage(ctx, author, channelId, input)
  return result.body as MessageDto
}

/**
 * Creates a message, optionally with a stored file and an Idempotency-Key. Returns the response
 * to send: 201 with the new message, or the remembered response of an earlier identical request.
 * On any failure a file it was given is removed.
 */
export async function createMessage(
  ctx: ServiceContext,
  author: MemberPrincipal,
  channelId: string,
  input: { text: string; file?: UploadedFile; idempotencyKey?: string; inReplyToEvent?: string; mentions?: string[]; threadId?: string; overSocket?: boolean; approval?: ApprovalRequest },
): Promise<StoredResponse> {
  const { text, file, idempotencyKey, inReplyToEvent } = input
  const threadId = input.threadId?.toLowerCase()
  let stored = false
  try {
    validateText(ctx, text, Boolean(file))
    if (input.approval && file) throw badRequest('an approval request is posted as JSON, without a file')
    const postHashOf = (): string => postHash(channelId, text, file, inReplyToEvent, input.mentions, threadId, input.approval)
    const dropFile = file ? () => removeFiles(ctx.config.uploadDir, [file.storageName]) : undefined
    // The key is looked up by the statement that inserts (no round trip of its own).
    const response = await withIdempotentInsert(
      ctx.db.pool,
      author.id,
      idempotencyKey,
      postHashOf,
      async (idempotent) => {
        // Observers are refused before anything is written (404 if they cannot even see the channel).
        if (isObserver(author)) assertCanPost(author, await readableChannel(ctx, author, channelId))
        if (threadId) await assertThreadRoot(ctx, author, channelId, threadId)

        // Loop protection (docs/loops.md): the chain cap here; the turn limit in the insert.
        const guard = await loopGuardSettings(ctx)
        const chainDepth = await loopGuard.chainDepth(ctx, author, inReplyToEvent, guard)
        const id = uuidv7()
        // The id's own time: a channel's last activity is read from its newest id (an index-only
        // scan, src/modules/channels/repo.ts) and must equal the message's created_at.
        const createdAt = uuidv7Time(id)
        const mentioned = await mentionsForPost(ctx, channelId, author.id, text, input.mentions)

        const attachment = file ? { id: uuidv7(), fileName: file.fileName, contentType: file.contentType, size: file.size, storageName: file.storageName } : undefined
        const approval = input.approval ? await prepareRequest(ctx, author, { messageId: id, channelId, createdAt }, input.approval) : undefined
        const dto = toMessageDto(
          {
            id,
            channelId,
            authorId: author.id,
            authorType: author.kind === 'agent' ? 'AGENT' : 'HUMAN',
            authorName: author.displayName,
            text,
            createdAt,
            editedAt: null,
            inReplyToEvent: inReplyToEvent ?? null,
            chainDepth,
            mentions: mentioned.ids,
            threadId: threadId ?? null,
            attachment,
            approval,
          },
          ctx.config.publicUrl,
        )
        // The message.created event carries the message's own id, so that `in_reply_to_event` of a
        // reply resolves to the message for as long as the message exists (the outbox is pruned).
        const addressed = await addressedPost(ctx, { channelId, authorId: author.id, threadId: threadId ?? null, notify: mentioned.notify })
        const event = { ...newEvent('message.created', channelId, { message: dto }), id, ...(addressed ? { addressed } : {}) }
        const mentionEvent = mentioned.notify.length ? newEvent('message.mentioned', channelId, { message: dto, mentioned_ids: mentioned.notify, mentioned_agent_ids: mentioned.notifyAgents }) : null
        const row: repo.NewMessage = {
          id,
          channelId,
          authorId: author.id,
          authorType: dto.author_type,
          authorName: dto.author_name,
          text,
          createdAt,
          inReplyToEvent: inReplyToEvent ?? null,
          chainDepth,
          threadId: threadId ?? null,
          attachment,
          idempotency: idempotent ? { key: idempotent.key, hash: idempotent.hash, body: dto } : undefined,
          event,
          mentions: mentioned.ids.length ? { ids: mentioned.ids, event: mentionEvent } : undefined,
          guard: loopGuard.guardParams(guard, input.overSocket === true || listensHere(ctx, author, channelId)),
          approval,
        }
        let result: repo.InsertResult
        try {
          result = await repo.insertMessage(ctx, row)
          if (result.kind === 'absent') {
            // Not a member: 404 if the channel is invisible to the caller, 403 if it can see it,
            // and the owner joins a regular channel on its first post there.
            const access = await readableChannel(ctx, author, channelId)
            assertCanPost(author, access)
            if (joinsOnPost(author, access)) await joinOnPost(ctx, author, access.channel)
            result = await repo.insertMessage(ctx, row)
          }
        } catch (error) {
          // (A concurrent twin with the same key committed first: withIdempotentInsert answers as it did.)
          if ((error as { code?: string }).code === '23503') throw notFound('channel') // deleted meanwhile
          throw error
        }
        if (result.kind === 'remembered') return { remembered: result.remembered }
        if (result.kind === 'refused') throw loopGuard.tooManyTurns(guard, result.retryAt)
        if (result.kind === 'absent') throw notFound(threadId ? 'thread root message' : 'channel') // removed or deleted in between
        stored = true
        ctx.events.publish(mentionEvent ? [event, mentionEvent] : [event])
        // An agent's reply in a thread ends its status there (issue 25); the post stands either way.
        if (threadId && author.kind === 'agent') await clearOnReply(ctx, threadId, author.id).catch((err: unknown) => ctx.log.warn({ err }, 'clearing a thread status failed'))
        return { statusCode: 201, body: dto }
      },
      dropFile,
    )
    // Only a replayed response can predate fields added since; a new one has the current shape.
    return stored ? response : currentShape(response)
  } catch (error) {
    if (file) await removeFiles(ctx.config.uploadDir, [file.storageName]).catch(() => {})
    throw error
  }
}

/** An agent with a WebSocket or SSE stream on this server that gets the channel's events hears it (the loop guard's turns). */
function listensHere(ctx: ServiceContext, author: MemberPrincipal, channelId: string): boolean {
  return author.kind === 'agent' && ctx.listeners.isMemberOf(author.id, channelId)
}

/**
 * The fields a message gained after a response could have been remembered (responses are kept
 * 24 h), with the value an older message has: those MessageSchema gives a `default`. An
 * Idempotency-Key replayed across an upgrade answers the current shape, not one the response
 * schema would refuse.
 */
const ADDED_MESSAGE_FIELDS: Record<string, unknown> = Object.fromEntries(
  Object.entries(MessageSchema.properties as Record<string, { default?: unknown }>).flatMap(([key, field]) => ('default' in field ? [[key, field.default]] : [])),
)

function currentShape(response: StoredResponse): StoredResponse {
  const body = response.body as Record<string, unknown> | null
  if (!body || typeof body !== 'object' || !('id' in body)) return response
  return { ...response, body: { ...ADDED_MESSAGE_FIELDS, ...body } }
}

/** The Idempotency-Key fingerprint of a post (without a cause, the same as before causes existed). */
function postHash(channelId: string, text: string, file: UploadedFile | undefined, inReplyToEvent: string | undefined, mentions?: string[], threadId?: string, approval?: ApprovalRequest): string {
  const fileRef = file ? { name: file.fileName, type: file.contentType, sha256: file.sha256 } : null
  if (mentions !== undefined || threadId !== undefined || approval !== undefined) {
    const extras = { ...(mentions !== undefined ? { mentions } : {}), ...(threadId !== undefined ? { thread_id: threadId } : {}), ...(approval !== undefined ? { approval } : {}) }
    return requestHash('POST /channels/:id/messages', channelId, text, fileRef, inReplyToEvent ?? null, extras)
  }
  return inReplyToEvent === undefined ? requestHash('POST /channels/:id/messages', channelId, text, fileRef) : requestHash('POST /channels/:id/messages', channelId, text, fileRef, inReplyToEvent)
}

export async function listMessages(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, query: ListMessagesQueryInput & { threads?: 'all' | 'roots' }): Promise<MessagePage> {
  if (query.before && query.after) throw new AppError('INVALID_CURSOR', 'give either before or after, not both')
  await readableChannel(ctx, principal, channelId)
  const rows = await repo.listMessages(ctx, channelId, query.limit + 1, { before: query.before, after: query.after }, query.threads === 'roots' ? 'roots' : 'history')
  return pageOf(ctx, principal, rows, query)
}

async function pageOf(ctx: ServiceContext, principal: MemberPrincipal, rows: Awaited<ReturnType<typeof repo.listMessages>>, query: ListMessagesQueryInput): Promise<MessagePage> {
  const hasMore = rows.length > query.limit
  // Going forward the extra row is the newest (first); going back it is the oldest (last).
  const page = hasMore ? (query.after ? rows.slice(1) : rows.slice(0, query.limit)) : rows
  const messages = await withReactions(
    ctx,
    await withLiveText(
      ctx,
      page.map((m) => toMessageDto(m, ctx.config.publicUrl)),
    ),
    principal.id,
  )
  return {
    messages,
    has_more: hasMore,
    next_before: messages.at(-1)?.id ?? null,
    next_after: messages[0]?.id ?? null,
  }
}

// ---- threads (docs/decisions.md, "Threads") ----

/**
 * A reply's thread_id must name a root of the same channel, and only a member who may post there
 * learns anything about it: the channel's own answer (404, or 403 for an observer) comes first.
 * A message of another channel, or none, is 404; a reply is 400 THREAD_NOT_ROOT.
 */
async function assertThreadRoot(ctx: ServiceContext, author: MemberPrincipal, channelId: string, threadId: string): Promise<void> {
  assertCanPost(author, await readableChannel(ctx, author, channelId))
  const target = await repo.findThreadTarget(ctx.db.pool, channelId, threadId)
  if (!target) throw notFound('thread root message')
  if (target.threadId) throw new AppError('THREAD_NOT_ROOT', `message ${threadId} is a reply; threads are one level deep: reply in its thread with thread_id ${target.threadId}`)
}

/** A thread's replies, newest first, with the channel list's cursors; readers of the channel only. */
export async function listReplies(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, rootId: string, query: ListMessagesQueryInput): Promise<MessagePage> {
  if (query.before && query.after) throw new AppError('INVALID_CURSOR', 'give either before or after, not both')
  const { message } = await messageInReadableChannel(ctx, principal, channelId, rootId)
  if (message.threadId) throw new AppError('THREAD_NOT_ROOT', `message ${rootId} is a reply; its thread is that of ${message.threadId}`)
  const rows = await repo.listMessages(ctx, rootId, query.limit + 1, { before: query.before, after: query.after }, 'replies')
  return pageOf(ctx, principal, rows, query)
}
// ---- end threads ----

async function messageInReadableChannel(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string) {
  const access = await readableChannel(ctx, principal, channelId)
  const message = await repo.findMessage(ctx.db.pool, channelId, messageId)
  if (!message) throw notFound('message')
  return { access, message }
}

export async function getMessage(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string): Promise<MessageDto> {
  const { message } = await messageInReadableChannel(ctx, principal, channelId, messageId)
  const [dto] = await withReactions(ctx, await withLiveText(ctx, [toMessageDto(message, ctx.config.publicUrl)]), principal.id)
  return dto!
}

/**
 * Only the author edits; the text may be blank only when the message carries a file. Mentions
 * are resolved again; members mentioned for the first time are notified (message.mentioned).
 */
export async function editMessage(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string, text: string, mentions?: string[]): Promise<MessageDto> {
  const { message } = await messageInReadableChannel(ctx, principal, channelId, messageId)
  if (message.deleted) throw notFound('message') // a deleted root kept for its thread
  if (message.authorId !== principal.id) throw forbidden('only the author may edit a message')
  // What an approver is shown must not change while they decide (docs/approvals.md).
  if (refusesEdit(message.approval)) throw new AppError('CONFLICT', 'an approval request cannot be edited while it is pending; cancel it and ask again')
  validateText(ctx, text, Boolean(message.attachment))
  const mentioned = await mentionsForEdit(ctx, channelId, message, text, mentions)
  // The event goes to many recipients: its reactions have counts, `reacted` false for all. Read
  // before the transaction (an edit does not change them): a query on the pool from inside it
  // would wait for a second connection while holding one.
  const [{ reactions }] = (await withReactions(ctx, [toMessageDto(message, ctx.config.publicUrl)], null)) as [MessageDto]
  const edited = await ctx.events.transaction(async (tx, emit) => {
    const updated = await repo.updateText(tx, messageId, text, new Date(), mentioned.ids)
    if (!updated) throw notFound('message') // deleted meanwhile
    const dto: MessageDto = { ...toMessageDto(updated, ctx.config.publicUrl), reactions }
    emit('message.updated', channelId, { message: dto })
    if (mentioned.notify.length) {
      const mention = emit('message.mentioned', channelId, { message: dto, mentioned_ids: mentioned.notify, mentioned_agent_ids: mentioned.notifyAgents })
      // An edit reaches the newly mentioned as this event (a post reaches them as message.created).
      const addressed = addressedEdit(principal.id, mentioned.notify)
      if (addressed) mention.addressed = addressed
    }
    return dto
  })
  const [dto] = await withReactions(ctx, [{ ...edited }], principal.id)
  return dto!
}

/** The author or an admin deletes; the attached file goes with it. */
export async function deleteMessage(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string): Promise<void> {
  const { message } = await messageInReadableChannel(ctx, principal, channelId, messageId)
  if (message.deleted) throw notFound('message') // a deleted root kept for its thread
  if (message.authorId !== principal.id && !(await isAdmin(ctx, principal))) throw forbidden('only the author or an admin may delete a message')
  // A root with replies stays as a placeholder; a reply's root is recounted (repo.removeMessage).
  const removal = await ctx.events.transaction(async (tx, emit) => {
    const outcome = await repo.removeMessage(tx, { id: messageId, threadId: message.threadId })
    if (outcome.kind === 'gone') return outcome
    emit('message.deleted', channelId, { message_id: messageId, channel_id: channelId, thread_id: message.threadId })
    if (outcome.kind === 'deleted' && outcome.rootRemoved && message.threadId) {
      emit('message.deleted', channelId, { message_id: message.threadId, channel_id: channelId, thread_id: null })
    }
    return outcome
  })
  if (removal.kind === 'gone') throw notFound('message')
  if (message.attachment) await removeFiles(ctx.config.uploadDir, [message.attachment.storageName]).catch((err: unknown) => ctx.log.warn({ err }, 'could not remove a deleted file'))
}

/** PostgreSQL's full-text search; a dedicated engine would be chosen here (search-engine.ts). */
const searchEngine: SearchEngine = postgresSearch

export async function search(ctx: ServiceContext, principal: MemberPrincipal, query: SearchQueryInput): Promise<SearchResult> {
  const q = query.q.trim()
  if (!q) throw badRequest("'q' must not be empty")
  if (query.channel_id) await readableChannel(ctx, principal, query.channel_id)
  // Search covers what the caller may read (canRead): the owner reads every regular channel.
  const channelIds = query.channel_id ? [query.channel_id] : await searchScope(ctx, principal.id, isOwner(principal))
  const rows = channelIds.length ? await searchEngine.search(ctx, { text: q, channelIds, limit: query.limit }) : []
  const found = await withReactions(
    ctx,
    rows.map((r) => toMessageDto(messageRecord(r), ctx.config.publicUrl)),
    principal.id,
  )
  return {
    results: rows.map((r, i) =>
      withMessageFields({
        message: found[i]!,
        rank: r.rank,
        snippet: r.snippet,
      }),
    ),
  }
}

/** A search hit carries the message's fields at its top level too (clients read `hit.text`). */
function withMessageFields(hit: { message: MessageDto; rank: number; snippet: string }): SearchResult['results'][number] {
  return { ...hit.message, ...hit }
}

/** A file, for members of its channel (and the owner for regular channels) only. */
export async function openAttachment(ctx: ServiceContext, principal: MemberPrincipal, attachmentId: string) {
  const attachment = await repo.findAttachment(ctx.db.prisma, attachmentId)
  if (!attachment) throw notFound('attachment')
  await readableChannel(ctx, principal, attachment.message.channelId).catch(() => {
    throw notFound('attachment')
  })
  const file = await openFile(ctx.config.uploadDir, attachment.storageName)
  if (!file) throw notFound('attachment')
  return { ...file, fileName: attachment.fileName }
}

/** The caller's mentions in the channels it may read now, newest first. */
export async function listMentions(ctx: ServiceContext, principal: MemberPrincipal, query: ListMentionsInput): Promise<MentionPage> {
  const channelIds = await searchScope(ctx, principal.id, isOwner(principal))
  const rows = channelIds.length ? await repo.mentionsOf(ctx, principal.id, channelIds, { take: query.limit + 1, before: query.cursor, since: query.since ? new Date(query.since) : undefined }) : []
  const hasMore = rows.length > query.limit
  const messages = rows.slice(0, query.limit).map((m) => toMessageDto(m, ctx.config.publicUrl))
  return { messages, has_more: hasMore, next_cursor: messages.at(-1)?.id ?? null }
}
