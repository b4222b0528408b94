// Streaming messages (issue 25; docs/decisions.md, "Streaming messages (issue 25)"). An agent
// starts a message in state `streaming`, appends to it, and finishes or cancels it; a human who
// can read the channel may ask it to stop; the sweep (src/workers/stream-sweeper.ts) interrupts
// streams left idle or stopped without an answer, on any instance. Events: the start, the Stop
// and the end are logged (message.stream_started, message.stop_requested,
// message.stream_finished, then message.created once with the final message); the appends travel
// as ephemeral message_delta frames (./deltas.ts), grow the live text (./live.ts) and reach the
// message row with the next flush, within a second.
import type { ServiceContext } from '../context.ts'
import { AppError, badRequest, forbidden, notFound } from '../../lib/errors.ts'
import { uuidv7, uuidv7Time } from '../../lib/ids.ts'
import type { MemberPrincipal } from '../identity/principal.ts'
import { assertCanPost, readableChannel } from '../channels/access.ts'
import { addressedMap, addressedPostResolver } from '../inbox/addressed.ts'
import { mentionResolverFor, type ResolvedMentions } from '../mentions/service.ts'
import * as loopGuard from '../messages/loop-guard.ts'
import { toMessageDto, type MessageDto } from '../../schemas/message.ts'
import { validateText, type UploadedFile } from '../messages/service.ts'
import { removeFiles } from '../messages/files.ts'
import { loopGuardSettings } from '../workspace/settings.ts'
import { liveOf, touched, withLiveText } from './live.ts'
import * as repo from './repo.ts'
import { clearOnReply } from './thread-status.ts'
import { APPENDS_PER_SECOND, MAX_APPEND_BYTES, MAX_CONCURRENT_STREAMS, STOP_GRACE_MS, type AppendResultDto, type StreamInfoDto, type StreamStatusDto } from './schemas.ts'

type EndState = 'complete' | 'cancelled' | 'interrupted'

// ---- start ----

/** `POST /channels/{id}/messages` with `"stream": true`: agents only (a human's own messages are not streams). */
export async function startStream(ctx: ServiceContext, author: MemberPrincipal, channelId: string, input: { text?: string; threadId?: string; inReplyToEvent?: string }): Promise<MessageDto> {
  if (author.kind !== 'agent') throw forbidden('only agents stream messages; a person posts a message whole')
  const text = input.text ?? ''
  // The initial text may be empty; otherwise it follows a post's rules.
  if (text !== '') validateText(ctx, text, false)
  if (Buffer.byteLength(text) > MAX_APPEND_BYTES) throw tooLarge()
  const threadId = input.threadId?.toLowerCase() ?? null
  const access = await readableChannel(ctx, author, channelId)
  assertCanPost(author, access)
  if (threadId) {
    const target = await repo.threadTarget(ctx.db.pool, channelId, threadId)
    if (!target) throw notFound('thread root message')
    if (target.threadId) throw new AppError('THREAD_NOT_ROOT', `message ${threadId} is a reply; threads are one level deep: stream in its thread with thread_id ${target.threadId}`)
  }
  if ((await repo.streamingCount(ctx.db.pool, author.id)) >= MAX_CONCURRENT_STREAMS) {
    throw new AppError('TOO_MANY_STREAMS', `an agent may have ${MAX_CONCURRENT_STREAMS} messages streaming at once: finish or cancel one first`)
  }
  const guard = await loopGuardSettings(ctx)
  const chainDepth = await loopGuard.chainDepth(ctx, author, input.inReplyToEvent, guard)
  const id = uuidv7()
  const createdAt = uuidv7Time(id)
  // An agent that hears the conversation over a socket here (as a post's turn counts it).
  const listening = ctx.listeners.isMemberOf(author.id, channelId)
  const dto = await ctx.events.transaction(async (tx, emit) => {
    await loopGuard.admitStreamStart(tx, guard, { channelId, threadId, authorId: author.id, at: createdAt, listening })
    const inserted = await repo.insertStream(tx, {
      id,
      channelId,
      authorId: author.id,
      authorName: author.displayName,
      text,
      createdAt,
      inReplyToEvent: input.inReplyToEvent ?? null,
      chainDepth,
      threadId,
    })
    if (!inserted) throw threadId ? notFound('thread root message') : forbidden('join the channel to post in it')
    const record = await repo.messageById(tx, id)
    const message = toMessageDto(record!, ctx.config.publicUrl)
    emit('message.stream_started', channelId, { message })
    return message
  })
  await liveOf(ctx).texts.open(id, { channelId, authorId: author.id, threadId, text, seq: 0, length: text.length, chars: [...text].length, lastAppendAt: createdAt.getTime() })
  // Its reply has begun (with a status of its own): the agent's status on the thread is over.
  if (threadId) await clearOnReply(ctx, threadId, author.id)
  return dto
}

// ---- append ----

const tooLarge = (): AppError => new AppError('STREAM_TOO_LONG', `an append carries at most ${MAX_APPEND_BYTES.toLocaleString('en-US')} bytes (UTF-8); nothing was appended`)

/** Appends (one, or a batch in order) to the caller's streaming message. */
export async function appendToStream(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string, appends: string[]): Promise<AppendResultDto> {
  if (appends.some((a) => Buffer.byteLength(a) > MAX_APPEND_BYTES)) throw tooLarge()
  const wait = liveOf(ctx).appends.admit(`${principal.id}:${messageId}`, Date.now())
  if (wait !== null) {
    const seconds = Math.max(1, Math.ceil(wait / 1000))
    throw new AppError('RATE_LIMITED', `at most ${APPENDS_PER_SECOND} append requests per second per stream (a batch counts once)`, { headers: { 'retry-after': String(seconds) } })
  }
  const text = appends.join('')
  const a = { authorId: principal.id, channelId, text, length: text.length, chars: [...text].length, maxChars: ctx.config.maxMessageLength, count: appends.length, at: Date.now() }
  const { texts, deltas } = liveOf(ctx)
  let done = await texts.append(messageId, a)
  // Not known here (started before this process, or Redis forgot it): loaded from its row, once.
  if (!done.ok && done.why === 'miss' && (await load(ctx, messageId, principal.id, channelId))) done = await texts.append(messageId, a)
  if (!done.ok) throw await whyNotAppended(ctx, principal, channelId, messageId, done.why === 'ended')
  touched(ctx, messageId)
  deltas.add({ channelId, messageId, threadId: done.threadId, seq: done.seq, offset: done.length - text.length, text, authorId: principal.id })
  return { message_id: messageId, seq: done.seq, length: done.length }
}

/** Loads a stream of this author and channel from its row into the live store; false when there is none to append to. */
async function load(ctx: ServiceContext, messageId: string, authorId: string, channelId: string): Promise<boolean> {
  const row = await repo.loadStream(ctx.db.pool, messageId, authorId, channelId)
  if (!row) return false
  await liveOf(ctx).texts.open(messageId, {
    channelId,
    authorId,
    threadId: row.threadId,
    text: row.text,
    seq: row.seq,
    length: row.length,
    chars: [...row.text].length,
    lastAppendAt: row.lastAppendAt.getTime(),
  })
  return true
}

/** Why an append, finish or cancel did nothing: the first rule it breaks, as the error to answer. */
async function whyNotAppended(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string, ending = false): Promise<AppError> {
  const access = await readableChannel(ctx, principal, channelId)
  const message = await repo.messageInChannel(ctx.db.pool, channelId, messageId)
  if (!message) return notFound('message')
  if (message.authorId !== principal.id) return forbidden('only the author of a streaming message appends to it, finishes or cancels it')
  if (message.streamState !== 'streaming') return streamEnded(message.streamState ?? 'complete')
  if (!access.member) return forbidden('join the channel to post in it')
  // Its end is being written (the row says streaming until that commits).
  if (ending) return new AppError('STREAM_ENDED', 'the stream is ending (finished or cancelled); it does not change any more')
  return new AppError('STREAM_TOO_LONG', `the text would be longer than ${ctx.config.maxMessageLength} characters; nothing was appended (finish the stream, or start another)`)
}

const streamEnded = (state: string): AppError =>
  new AppError('STREAM_ENDED', state === 'complete' ? 'the message is not streaming (finished, or posted whole)' : `the stream has ended (${state}); it does not change any more`)

// ---- end: finish, cancel, interrupt ----

/**
 * `…/stream/finish`: the stream becomes `complete`, with `text` as its final text when given, and
 * `file` as its attachment (stored already; removed again if the finish fails). With a file the
 * text may be blank, as a post's may.
 */
export async function finishStream(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string, text?: string, file?: UploadedFile): Promise<MessageDto> {
  try {
    if (text !== undefined) validateText(ctx, text, Boolean(file))
    return await endByAuthor(ctx, principal, channelId, messageId, 'complete', text, file)
  } catch (error) {
    if (file) await removeFiles(ctx.config.uploadDir, [file.storageName]).catch(() => {})
    throw error
  }
}

/** `…/stream/cancel`: the stream becomes `cancelled`, with what was written. */
export async function cancelStream(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string): Promise<MessageDto> {
  return endByAuthor(ctx, principal, channelId, messageId, 'cancelled')
}

async function endByAuthor(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string, state: EndState, text?: string, file?: UploadedFile): Promise<MessageDto> {
  const found = await repo.messageInChannel(ctx.db.pool, channelId, messageId)
  // Only a stream of this channel by this caller ends here; anything else answers why not.
  if (!found || found.authorId !== principal.id || found.streamState !== 'streaming') throw await whyNotAppended(ctx, principal, channelId, messageId)
  const dto = await endStream(ctx, { messageId, authorId: principal.id, channelId }, state, text, file)
  if (!dto) throw await whyNotAppended(ctx, principal, channelId, messageId) // ended meanwhile
  return dto
}

/**
 * Ends one stream in one transaction: its state, final text and mentions, then the events:
 * message.stream_finished, message.created (once, with the message's own id, as a post's is) and
 * message.mentioned when it mentions others. Null when it was no longer streaming.
 */
async function endStream(ctx: ServiceContext, s: { messageId: string; authorId: string; channelId: string }, state: EndState, finalText?: string, file?: UploadedFile): Promise<MessageDto | null> {
  const { texts, deltas } = liveOf(ctx)
  // From here appends are refused, and this is the text: the live one, or the row's when this
  // instance does not know the stream (the row's is as of the last flush).
  const current = await texts.end(s.messageId)
  deltas.end(s.messageId)
  try {
    const dto = await writeEnd(ctx, s, state, current?.text, finalText, file)
    await texts.forget([s.messageId])
    return dto
  } catch (error) {
    // Not ended (a blank finish, an outage): the stream goes on.
    await texts.reopen(s.messageId).catch(() => {})
    throw error
  }
}

async function writeEnd(
  ctx: ServiceContext,
  s: { messageId: string; authorId: string; channelId: string },
  state: EndState,
  liveText: string | undefined,
  finalText?: string,
  file?: UploadedFile,
): Promise<MessageDto | null> {
  let mentioned: ResolvedMentions = { ids: [], notify: [], notifyAgents: [] }
  // Everything read besides the message is read before the transaction: a query on the pool while
  // the transaction holds a connection deadlocks the pool when as many streams end at once as it
  // has connections (the full-scale bench ended 100 together).
  const threadId = (await repo.messageInChannel(ctx.db.pool, s.channelId, s.messageId))?.threadId ?? null
  const [mentionsOf, addressedFor] = await Promise.all([mentionResolverFor(ctx, s.channelId, s.authorId), addressedPostResolver(ctx, { channelId: s.channelId, authorId: s.authorId, threadId })])
  const dto = await ctx.events.transaction(async (tx, emit) => {
    const ended = await repo.endStream(tx, {
      messageId: s.messageId,
      authorId: s.authorId,
      state,
      text: (current) => {
        const text = finalText ?? liveText ?? current
        if (state === 'complete' && text.trim() === '' && !file) throw badRequest("the stream's text is empty: append text first, or finish it with 'text' (or a file)")
        return text
      },
      attachment: file ? { id: uuidv7(), fileName: file.fileName, contentType: file.contentType, size: file.size, storageName: file.storageName } : undefined,
      mentions: async (text) => {
        mentioned = mentionsOf(text)
        return mentioned.ids
      },
    })
    if (!ended) return null
    const record = await repo.messageById(tx, s.messageId)
    const message = toMessageDto(record!, ctx.config.publicUrl)
    emit('message.stream_finished', s.channelId, { message })
    const created = emit('message.created', s.channelId, { message })
    created.id = s.messageId
    const addressed = addressedFor(mentioned.notify)
    if (addressed) created.addressed = addressed
    if (mentioned.notify.length) emit('message.mentioned', s.channelId, { message, mentioned_ids: mentioned.notify, mentioned_agent_ids: mentioned.notifyAgents })
    return message
  })
  return dto
}

// ---- stop ----

/** `…/stream/stop`: a human who can read the channel asks the agent to stop (idempotent). */
export async function requestStop(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string): Promise<MessageDto> {
  await readableChannel(ctx, principal, channelId)
  const message = await repo.messageInChannel(ctx.db.pool, channelId, messageId)
  if (!message) throw notFound('message')
  if (principal.kind !== 'human') throw forbidden('Stop is for people; the streaming agent finishes or cancels its own stream')
  if (message.streamState !== 'streaming') throw streamEnded(message.streamState ?? 'complete')
  await ctx.events.transaction(async (tx, emit) => {
    if (!(await repo.requestStop(tx, messageId, principal.id, new Date()))) return
    // Addressed to the streaming agent: its inbox gets a `stop` item, `only=addressed` streams get it.
    const event = emit('message.stop_requested', channelId, {
      message_id: messageId,
      channel_id: channelId,
      thread_id: message.threadId ?? null,
      author_id: message.authorId,
      requested_by_id: principal.id,
      requested_by_name: principal.displayName,
    })
    const addressed = addressedMap(principal.id, [['stop', [message.authorId]]])
    if (addressed) event.addressed = addressed
  })
  const [dto] = await withLiveText(ctx, [toMessageDto(message, ctx.config.publicUrl)])
  return dto!
}

// ---- the sweep ----

/**
 * Interrupts the streams without an append for STREAM_IDLE_SECONDS, or stopped without an answer
 * for STOP_GRACE_MS, as of `now`: those of a dead instance too (the state is in PostgreSQL). Safe
 * on every instance at once: each stream is locked by the sweep that ends it and skipped by the
 * others. Answers how many it ended.
 */
export async function sweepStreams(ctx: ServiceContext, now = Date.now(), batch = 100): Promise<number> {
  const idleBefore = new Date(now - ctx.config.streamIdleSeconds * 1000)
  const stopBefore = new Date(now - STOP_GRACE_MS)
  let ended = 0
  for (;;) {
    const stale = await repo.staleStreams(ctx.db.pool, idleBefore, stopBefore, batch)
    if (!stale.length) return ended
    for (const s of stale) if (await endStream(ctx, s, 'interrupted')) ended++
    if (stale.length < batch) return ended
  }
}

// ---- status ----

/** The author sets what it is doing on its streaming message; pushed to watchers at once. */
export async function setStatus(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string, status: StreamStatusDto): Promise<StreamInfoDto> {
  const done = await repo.setStatus(ctx.db.pool, { messageId, channelId, authorId: principal.id, status })
  if (!done) throw await whyNotAppended(ctx, principal, channelId, messageId)
  ctx.signals.publish({
    channelIds: [channelId],
    except: principal.id,
    sse: true,
    frame: { type: 'message_status', channel_id: channelId, message_id: messageId, thread_id: done.threadId, status },
  })
  return streamInfo(ctx, principal, channelId, messageId)
}

/** A stream's live part for a reader: state, appends so far, status, Stop (a late joiner's view). */
export async function streamInfo(ctx: ServiceContext, principal: MemberPrincipal, channelId: string, messageId: string): Promise<StreamInfoDto> {
  await readableChannel(ctx, principal, channelId)
  const message = await repo.messageInChannel(ctx.db.pool, channelId, messageId)
  if (!message) throw notFound('message')
  const row = message.streamState === 'streaming' ? await repo.streamRow(ctx.db.pool, messageId) : null
  const state = (row ? 'streaming' : message.streamState === 'streaming' ? 'complete' : (message.streamState ?? 'complete')) as StreamInfoDto['stream_state']
  // The row's count lags up to a flush; the live store's is current.
  const seq = row ? ((await liveOf(ctx).texts.read([messageId])).get(messageId)?.seq ?? row.seq) : 0
  return { message_id: messageId, stream_state: state, seq, status: (row?.status as StreamStatusDto | null) ?? null, stop_requested: row?.stopRequested ?? false }
}
