// The MCP tools, one `defineTool` declaration each (src/mcp/tool.ts). Each one calls the same
// service as the REST route it mirrors, with the caller's principal, so access rules, idempotency,
// events, webhooks and integrations apply unchanged: a message posted here is an ordinary message
// to everyone else. Each answers compact text for the model plus the same data as
// structuredContent, whose shape is the declared output schema (built from the REST schemas).
import type { FastifyInstance } from 'fastify'
import { Type, type Static } from 'typebox'
import { AppError, badRequest } from '../lib/errors.ts'
import { MeSchema } from '../modules/accounts/schemas.ts'
import { ApprovalRequestSchema } from '../modules/approvals/schemas.ts'
import { getApproval } from '../modules/approvals/service.ts'
import { describeCaller } from '../modules/accounts/service.ts'
import { AgentSchema } from '../modules/agents/schemas.ts'
import { listAgents } from '../modules/agents/service.ts'
import { channelIdsOf } from '../modules/channels/access.ts'
import { ChannelListItem, MemberSchema, ReadStateSchema } from '../modules/channels/schemas.ts'
import * as channels from '../modules/channels/service.ts'
import { DmSchema, type DmDto } from '../modules/dm/schemas.ts'
import { openDm } from '../modules/dm/service.ts'
import { SearchHitSchema } from '../modules/messages/schemas.ts'
import { ApprovalSchema, type ApprovalDto } from '../schemas/approval.ts'
import { MessageSchema, type MessageDto } from '../schemas/message.ts'
import * as messages from '../modules/messages/service.ts'
import { StreamInfo, StreamStatus, ThreadStatuses } from '../modules/streams/schemas.ts'
import * as streams from '../modules/streams/service.ts'
import * as threadStatus from '../modules/streams/thread-status.ts'
import { ACK_IDS_MAX, AckResultSchema, InboxCountsSchema, InboxPageSchema, type InboxCounts, type InboxItem, type InboxPage } from '../modules/inbox/schemas.ts'
import { acknowledgeInbox, inboxCounts, readInbox, waitForInbox } from '../modules/inbox/service.ts'
import { MessageReactionsSchema } from '../modules/reactions/schemas.ts'
import { setReaction } from '../modules/reactions/service.ts'
import type { MemberPrincipal } from '../modules/identity/principal.ts'
import { Uuid } from '../schemas/common.ts'
import { SINCE_NOW, sinceCursor, SINCE_PATTERN } from '../realtime/cursor.ts'
import { OnlyField } from '../events/filter.ts'
import { EventPageSchema, type EventPage } from '../realtime/event-log/schemas.ts'
import { readEventLog } from '../realtime/event-log/service.ts'
import type { EventFrame } from '../realtime/frames.ts'
import { approvalLine, bounded, boundedEvent, eventLine, eventSize, fitting, MAX_MESSAGE_CHARS, messageLine, type McpMessage } from './format.ts'
import { storeFile } from './files.ts'
import { defaulted, defineTool, type Tool, type ToolContext, type ToolOutput } from './tool.ts'

export const WAIT_MAX_SECONDS = 30
const LIST_MAX = 200
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const ChannelRef = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'The channel: its id (from list_channels), or its name such as "general" or "#general" (your DMs are named after the other participant).',
})
const MessageId = Type.String({ format: 'uuid', description: 'The message id (shown as "msg <id>" by read_messages).' })
const Offset = defaulted(Type.Integer({ minimum: 0, description: 'Skip this many entries (paging, default 0).' }), 0)
const ListLimit = defaulted(Type.Integer({ minimum: 1, maximum: LIST_MAX, description: `At most this many (1-${LIST_MAX}, default 100).` }), 100)
const NextOffset = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'Pass as offset to get the next entries; null when there are no more.' })
const Total = Type.Integer({ minimum: 0, description: 'How many there are in all.' })
const Cursor = (which: string) => Type.Union([Uuid, Type.Null()], { description: `The id of the ${which} message shown, to continue from; null when none is shown.` })
const MessageResult = Type.Object({ message: MessageSchema }, { additionalProperties: false })
const agent = AgentSchema.properties
const AgentSummary = Type.Object({ id: agent.id, name: agent.name, display_name: agent.display_name, description: agent.description, is_primary: agent.is_primary }, { additionalProperties: false })

/** A channel id from an id or a name among the caller's channels. */
export async function resolveChannel(app: FastifyInstance, principal: MemberPrincipal, ref: string): Promise<string> {
  const trimmed = ref.trim()
  if (UUID_RE.test(trimmed)) return trimmed.toLowerCase()
  const name = trimmed.replace(/^#/, '').toLowerCase()
  const matches = (await channels.listChannels(app.ctx, principal)).filter((c) => c.name.toLowerCase() === name)
  if (!matches.length) throw new AppError('NOT_FOUND', `no channel named '${trimmed}' among the channels you can read (list_channels shows them)`)
  const regular = matches.filter((c) => c.type === 'channel')
  if (matches.length > 1 && regular.length !== 1) throw badRequest(`more than one channel is named '${trimmed}'; give its id`)
  return (regular[0] ?? matches[0]!).id
}

function page<T>(items: T[], offset: number, limit: number): { items: T[]; next_offset: number | null } {
  const slice = items.slice(offset, offset + limit)
  return { items: slice, next_offset: offset + slice.length < items.length ? offset + slice.length : null }
}

const whoami = defineTool({
  name: 'whoami',
  title: 'Who am I',
  description: 'Tells you who you are in this workspace: your id, name and type (AGENT or HUMAN). Your id is the author_id of the messages you post.',
  input: Type.Object({}, { additionalProperties: false }),
  output: MeSchema,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(ctx) {
    const me = describeCaller(ctx.principal)
    const name = 'name' in me ? me.name : me.email
    return { text: `You are ${me.display_name} (${me.type}, ${name}), id ${me.id}.`, structured: { ...me } }
  },
})

const listChannelsTool = defineTool({
  name: 'list_channels',
  title: 'List channels',
  description:
    'Lists the channels and direct messages (DMs) you can read, with their ids. Use the id or name with read_messages and post_message. Each carries unread_count (messages after your read marker) and last_read_message_id.',
  input: Type.Object({ limit: ListLimit, offset: Offset }, { additionalProperties: false }),
  output: Type.Object({ channels: Type.Array(ChannelListItem), total: Total, next_offset: NextOffset }, { additionalProperties: false }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(ctx, args) {
    const all = await channels.listChannels(ctx.app.ctx, ctx.principal)
    const { items, next_offset } = page(all, args.offset, args.limit)
    const lines = items.map((c) => `- ${c.type === 'dm' ? `DM with ${c.name}` : `#${c.name}`} (id ${c.id})${c.description ? `: ${c.description}` : ''}`)
    const more = next_offset !== null ? `\n(${all.length - next_offset} more: call again with offset=${next_offset})` : ''
    return {
      text: `${all.length} channel(s) you can read:\n${lines.join('\n') || '(none)'}${more}`,
      structured: { channels: items, total: all.length, next_offset },
    }
  },
})

const readMessagesTool = defineTool({
  name: 'read_messages',
  title: 'Read messages',
  description:
    'Reads messages of a channel or DM, listed oldest to newest. Without a cursor: the newest messages. before=<message id>: the page just older than that message (scroll back). after=<message id>: the messages posted after that one (catch up since a message you have seen). Long pages are cut to fit and give the cursor to continue.',
  input: Type.Object(
    {
      channel: ChannelRef,
      before: Type.Optional({ ...MessageId, description: 'Read the messages older than this message id.' }),
      after: Type.Optional({ ...MessageId, description: 'Read the messages newer than this message id.' }),
      limit: defaulted(Type.Integer({ minimum: 1, maximum: 100, description: 'At most this many messages (1-100, default 30).' }), 30),
    },
    { additionalProperties: false },
  ),
  output: Type.Object(
    {
      channel_id: Uuid,
      messages: Type.Array(MessageSchema, { description: 'Oldest first.' }),
      direction: Type.Union([Type.Literal('older'), Type.Literal('newer')], { description: '`newer` when read with `after`, else `older`.' }),
      has_more: Type.Boolean({ description: 'More messages lie in the direction read: continue with the cursor.' }),
      older_cursor: Cursor('oldest'),
      newer_cursor: Cursor('newest'),
    },
    { additionalProperties: false },
  ),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(ctx, args) {
    const channelId = await resolveChannel(ctx.app, ctx.principal, args.channel)
    const result = await messages.listMessages(ctx.app.ctx, ctx.principal, channelId, { limit: args.limit, before: args.before, after: args.after })
    // REST lists newest first; going back keep the newest, going forward the oldest.
    const forward = Boolean(args.after)
    const ordered = forward ? [...result.messages].reverse() : result.messages
    const keep = fitting(ordered, (m) => Math.min(m.text.length, MAX_MESSAGE_CHARS) + 200)
    const kept = ordered.slice(0, keep).map(bounded)
    const chronological = forward ? kept : [...kept].reverse()
    const hasMore = result.has_more || keep < ordered.length
    const structured = {
      channel_id: channelId,
      messages: chronological,
      direction: forward ? ('newer' as const) : ('older' as const),
      has_more: hasMore,
      older_cursor: chronological[0]?.id ?? null,
      newer_cursor: chronological.at(-1)?.id ?? null,
    }
    const lines = chronological.map(messageLine)
    const hint = !chronological.length
      ? ''
      : hasMore
        ? forward
          ? `\nMore newer messages: read_messages with after=${structured.newer_cursor}`
          : `\nOlder messages exist: read_messages with before=${structured.older_cursor}`
        : forward
          ? '\nYou are up to date.'
          : '\nThis is the start of the channel.'
    return { text: `${chronological.length} message(s) in ${channelId}, oldest first:\n${lines.join('\n') || '(no messages)'}${hint}`, structured }
  },
})

const FileArg = Type.Object(
  {
    url: Type.Optional(Type.String({ maxLength: 2048, description: 'A public http(s) URL the server downloads the file from (no redirects; private and loopback addresses are refused).' })),
    base64: Type.Optional(Type.String({ description: 'The file content, base64-encoded (at most 10 MiB decoded).' })),
    filename: Type.Optional(Type.String({ maxLength: 255, description: 'File name to show, e.g. "report.pdf".' })),
    content_type: Type.Optional(Type.String({ maxLength: 255, description: 'Media type, e.g. "application/pdf".' })),
  },
  { additionalProperties: false, description: 'One file attached to the message (at most 10 MiB): give either url or base64.' },
)

const postMessageTool = defineTool({
  name: 'post_message',
  title: 'Post a message',
  description:
    'Posts a message to a channel or DM as you. Everyone in it sees it at once (WebSocket, webhooks, integrations). Optionally attach one file (by URL or base64, at most 10 MiB). Give an idempotency_key when you might retry, so a retry does not post twice. To message someone privately, open_dm first.',
  input: Type.Object(
    {
      channel: ChannelRef,
      text: Type.String({ maxLength: 1_000_000, description: 'The message text (may be empty only with a file).' }),
      file: Type.Optional(FileArg),
      idempotency_key: Type.Optional(
        Type.String({ minLength: 1, maxLength: 255, description: 'Any unique string; retrying with the same key and content returns the first post instead of posting again.' }),
      ),
      in_reply_to_event: Type.Optional(
        Type.String({
          format: 'uuid',
          description:
            'The id of the message you are replying to (the id of its message.created event), or the event_id of another event you react to. Lets the server cap chains of agents replying to each other; if it answers LOOP_DETECTED, stop replying in this conversation until a human speaks.',
        }),
      ),
      thread_id: Type.Optional(
        Type.String({
          format: 'uuid',
          description: 'Reply in a thread: the id of its root message (a message of this channel that is not itself a reply; a reply carries its root as thread_id). read_thread shows a thread.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  output: MessageResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(ctx, args) {
    const channelId = await resolveChannel(ctx.app, ctx.principal, args.channel)
    messages.validateText(ctx.app.ctx, args.text, Boolean(args.file))
    const file = args.file ? await storeFile(ctx.app, args.file) : undefined
    const result = await messages.createMessage(ctx.app.ctx, ctx.principal, channelId, {
      text: args.text,
      file,
      idempotencyKey: args.idempotency_key,
      inReplyToEvent: args.in_reply_to_event,
      threadId: args.thread_id,
    })
    const message = bounded(result.body as MessageDto)
    return { text: `Posted: ${messageLine(message)}`, structured: { message } }
  },
})

// ---- streaming messages (issue 25; docs/mcp.md) ----
const StreamAppendResult = Type.Object(
  {
    message_id: Uuid,
    seq: Type.Integer({ minimum: 1, description: "This call's last append's number." }),
    length: Type.Integer({ minimum: 0, description: 'The text length so far (UTF-16 code units).' }),
  },
  { additionalProperties: false },
)

const startStreamTool = defineTool({
  name: 'start_stream',
  title: 'Start a streaming message',
  description:
    'Starts a message that people watch grow while you work (a long answer): it shows at once with the text you give (may be empty), then append_stream adds text and finish_stream ends it. Webhooks and integrations see it once, when it is finished. If a person presses Stop you receive message_stop_requested: finish or cancel within 30 s. A stream with no append for 2 minutes ends as interrupted. At most 10 of yours stream at once.',
  input: Type.Object(
    {
      channel: ChannelRef,
      text: Type.Optional(Type.String({ maxLength: 1_000_000, description: 'The initial text (default empty).' })),
      thread_id: Type.Optional(Type.String({ format: 'uuid', description: 'Stream a reply in this thread (the id of its root message).' })),
      in_reply_to_event: Type.Optional(Type.String({ format: 'uuid', description: 'The id of the message (or event) you are answering, as for post_message.' })),
    },
    { additionalProperties: false },
  ),
  output: MessageResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(ctx, args) {
    const channelId = await resolveChannel(ctx.app, ctx.principal, args.channel)
    const message = bounded(await streams.startStream(ctx.app.ctx, ctx.principal, channelId, { text: args.text, threadId: args.thread_id, inReplyToEvent: args.in_reply_to_event }))
    return { text: `Streaming: ${messageLine(message)}\nAppend with append_stream (message_id ${message.id}); end with finish_stream.`, structured: { message } }
  },
})

const appendStreamTool = defineTool({
  name: 'append_stream',
  title: 'Append to your streaming message',
  description: 'Adds text at the end of your streaming message; watchers see it at once. At most 16 KiB per call; the whole text at most the message limit; at most 50 calls a second.',
  input: Type.Object({ channel: ChannelRef, message_id: MessageId, text: Type.String({ minLength: 1, maxLength: 16_384, description: 'The text to add.' }) }, { additionalProperties: false }),
  output: StreamAppendResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(ctx, args) {
    const channelId = await resolveChannel(ctx.app, ctx.principal, args.channel)
    const done = await streams.appendToStream(ctx.app.ctx, ctx.principal, channelId, args.message_id, [args.text])
    return { text: `Appended (#${done.seq}; ${done.length} characters so far).`, structured: done }
  },
})

const finishStreamTool = defineTool({
  name: 'finish_stream',
  title: 'Finish your streaming message',
  description:
    'Ends your streaming message: complete, with text as its final text when you give it (otherwise what you appended). cancel: true ends it as cancelled instead, keeping what was written (answer a Stop this way when you stop early). Members and webhooks then get the message once.',
  input: Type.Object(
    {
      channel: ChannelRef,
      message_id: MessageId,
      text: Type.Optional(Type.String({ maxLength: 1_000_000, description: 'The final text, replacing what was appended.' })),
      cancel: Type.Optional(Type.Boolean({ description: 'true: cancel instead of finishing (text is then not taken).' })),
    },
    { additionalProperties: false },
  ),
  output: MessageResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(ctx, args) {
    const channelId = await resolveChannel(ctx.app, ctx.principal, args.channel)
    const ended = args.cancel
      ? await streams.cancelStream(ctx.app.ctx, ctx.principal, channelId, args.message_id)
      : await streams.finishStream(ctx.app.ctx, ctx.principal, channelId, args.message_id, args.text)
    const message = bounded(ended)
    return { text: `${args.cancel ? 'Cancelled' : 'Finished'}: ${messageLine(message)}`, structured: { message } }
  },
})
const setStatusTool = defineTool({
  name: 'set_status',
  title: 'Show what you are doing on your streaming message, or in a thread',
  description:
    'Shows people what you are doing: a title ("Searching the docs…") and the steps of your plan, each pending, in_progress, complete or error. Give message_id for your streaming message (cleared when you finish it), or thread_id (the root message) for a thread you will answer in without a stream yet (cleared when you reply there, with clear: true, or after 2 minutes unchanged). Each call replaces your whole status.',
  input: Type.Object(
    {
      channel: ChannelRef,
      message_id: Type.Optional(Type.String({ format: 'uuid', description: 'Your streaming message.' })),
      thread_id: Type.Optional(Type.String({ format: 'uuid', description: "Instead of message_id: a thread's root message, for a status without a stream." })),
      title: Type.Optional(StreamStatus.properties.title),
      steps: Type.Optional(StreamStatus.properties.steps),
      clear: Type.Optional(Type.Boolean({ description: 'With thread_id: true removes your status on the thread (title is then not taken).' })),
    },
    { additionalProperties: false },
  ),
  output: Type.Union([StreamInfo, ThreadStatuses]),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx, args) {
    if ((args.message_id === undefined) === (args.thread_id === undefined)) throw badRequest('give either message_id (your streaming message) or thread_id (a thread without a stream)')
    const channelId = await resolveChannel(ctx.app, ctx.principal, args.channel)
    if (args.clear) {
      if (args.thread_id === undefined) throw badRequest("clear is for a thread status; a stream's status is cleared when you finish it")
      await threadStatus.clearThreadStatus(ctx.app.ctx, ctx.principal, channelId, args.thread_id)
      return { text: 'Status cleared.', structured: await threadStatus.threadStatuses(ctx.app.ctx, ctx.principal, channelId, args.thread_id) }
    }
    if (args.title === undefined) throw badRequest("missing argument 'title'")
    const status = { title: args.title, steps: args.steps ?? [] }
    const steps = status.steps.map((s) => `${s.state === 'complete' ? '✓' : s.state === 'error' ? '✗' : s.state === 'in_progress' ? '…' : '·'} ${s.title}`).join('; ')
    const line = `Status: ${args.title}${steps ? ` (${steps})` : ''}`
    if (args.thread_id !== undefined) return { text: line, structured: await threadStatus.setThreadStatus(ctx.app.ctx, ctx.principal, channelId, args.thread_id, status) }
    return { text: line, structured: await streams.setStatus(ctx.app.ctx, ctx.principal, channelId, args.message_id!, status) }
  },
})
// ---- end streaming messages ----

const readThreadTool = defineTool({
  name: 'read_thread',
  title: 'Read a thread',
  description:
    'Reads a thread: its root message, then its replies oldest to newest. Give the channel and the id of the root (a message with reply_count, or the thread_id of a reply). Without a cursor: the newest replies; before=<reply id> scrolls back, after=<reply id> catches up. Reply with post_message and thread_id.',
  input: Type.Object(
    {
      channel: ChannelRef,
      message_id: { ...MessageId, description: 'The root message of the thread.' },
      before: Type.Optional({ ...MessageId, description: 'Read the replies older than this reply id.' }),
      after: Type.Optional({ ...MessageId, description: 'Read the replies newer than this reply id.' }),
      limit: defaulted(Type.Integer({ minimum: 1, maximum: 100, description: 'At most this many replies (1-100, default 30).' }), 30),
    },
    { additionalProperties: false },
  ),
  output: Type.Object(
    {
      channel_id: Uuid,
      root: MessageSchema,
      replies: Type.Array(MessageSchema, { description: 'Oldest first.' }),
      has_more: Type.Boolean({ description: 'More replies lie in the direction read: continue with the cursor.' }),
      older_cursor: Cursor('oldest reply'),
      newer_cursor: Cursor('newest reply'),
    },
    { additionalProperties: false },
  ),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(ctx, args) {
    const channelId = await resolveChannel(ctx.app, ctx.principal, args.channel)
    const result = await messages.listReplies(ctx.app.ctx, ctx.principal, channelId, args.message_id, { limit: args.limit, before: args.before, after: args.after })
    const root = bounded(await messages.getMessage(ctx.app.ctx, ctx.principal, channelId, args.message_id))
    const forward = Boolean(args.after)
    const ordered = forward ? [...result.messages].reverse() : result.messages
    const keep = fitting(ordered, (m) => Math.min(m.text.length, MAX_MESSAGE_CHARS) + 200)
    const kept = ordered.slice(0, keep).map(bounded)
    const replies = forward ? kept : [...kept].reverse()
    const hasMore = result.has_more || keep < ordered.length
    const structured = {
      channel_id: channelId,
      root,
      replies,
      has_more: hasMore,
      older_cursor: replies[0]?.id ?? null,
      newer_cursor: replies.at(-1)?.id ?? null,
    }
    const hint = !hasMore ? '' : forward ? `\nMore newer replies: read_thread with after=${structured.newer_cursor}` : `\nOlder replies exist: read_thread with before=${structured.older_cursor}`
    const head = `Thread of ${root.deleted ? '(deleted message) ' : ''}${messageLine(root)}\n${root.reply_count} repl${root.reply_count === 1 ? 'y' : 'ies'}; ${replies.length} shown, oldest first:`
    return { text: `${head}\n${replies.map(messageLine).join('\n') || '(no replies)'}${hint}`, structured }
  },
})

const editMessageTool = defineTool({
  name: 'edit_message',
  title: 'Edit a message',
  description: 'Replaces the text of one of your own messages (only its author may edit). Members see the change at once.',
  input: Type.Object({ channel: ChannelRef, message_id: MessageId, text: Type.String({ maxLength: 1_000_000, description: 'The new text.' }) }, { additionalProperties: false }),
  output: MessageResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx, args) {
    const channelId = await resolveChannel(ctx.app, ctx.principal, args.channel)
    const message = bounded(await messages.editMessage(ctx.app.ctx, ctx.principal, channelId, args.message_id, args.text))
    return { text: `Edited: ${messageLine(message)}`, structured: { message } }
  },
})

const deleteMessageTool = defineTool({
  name: 'delete_message',
  title: 'Delete a message',
  description: 'Deletes a message and its file for everyone. Only its author or a workspace admin may. Cannot be undone.',
  input: Type.Object({ channel: ChannelRef, message_id: MessageId }, { additionalProperties: false }),
  output: Type.Object({ deleted: Type.Literal(true), channel_id: Uuid, message_id: Uuid }, { additionalProperties: false }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(ctx, args) {
    const channelId = await resolveChannel(ctx.app, ctx.principal, args.channel)
    await messages.deleteMessage(ctx.app.ctx, ctx.principal, channelId, args.message_id)
    return { text: `Deleted message ${args.message_id}.`, structured: { deleted: true as const, channel_id: channelId, message_id: args.message_id } }
  },
})

const markReadTool = defineTool({
  name: 'mark_read',
  title: 'Mark a conversation read',
  description:
    'Moves your read marker in a channel or DM up to a message (usually the newest you have handled), so its unread_count in list_channels drops and you, or the people who share your agent, know where you stopped. The marker only moves forward; you must be a member.',
  input: Type.Object({ channel: ChannelRef, message_id: MessageId }, { additionalProperties: false }),
  output: ReadStateSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx, args) {
    const channelId = await resolveChannel(ctx.app, ctx.principal, args.channel)
    const state = await channels.markRead(ctx.app.ctx, ctx.principal, channelId, args.message_id)
    return { text: `Read up to ${state.last_read_message_id} in ${channelId}; ${state.unread_count} unread after it.`, structured: { ...state } }
  },
})

const searchMessagesTool = defineTool({
  name: 'search_messages',
  title: 'Search messages',
  description:
    'Full-text search over the messages you can read, best match first among the newest 200 matches. Words are matched by stem ("deploying" finds "deploy"); use "quotes" for a phrase, OR between alternatives, -word to exclude. Optionally limit to one channel.',
  input: Type.Object(
    {
      query: Type.String({ minLength: 1, maxLength: 500, description: 'What to look for.' }),
      channel: Type.Optional(ChannelRef),
      limit: defaulted(Type.Integer({ minimum: 1, maximum: 50, description: 'At most this many results (1-50, default 20).' }), 20),
    },
    { additionalProperties: false },
  ),
  output: Type.Object(
    {
      results: Type.Array(Type.Object({ message: MessageSchema, rank: SearchHitSchema.properties.rank, snippet: SearchHitSchema.properties.snippet }, { additionalProperties: false }), {
        description: 'Best match first.',
      }),
    },
    { additionalProperties: false },
  ),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(ctx, args) {
    const channelId = args.channel ? await resolveChannel(ctx.app, ctx.principal, args.channel) : undefined
    const found = await messages.search(ctx.app.ctx, ctx.principal, { q: args.query, channel_id: channelId, limit: args.limit })
    const keep = fitting(found.results, (r) => Math.min(r.text.length, MAX_MESSAGE_CHARS) + 300)
    const results = found.results.slice(0, keep).map((r) => ({ message: bounded(r.message), rank: r.rank, snippet: r.snippet }))
    const lines = results.map((r) => `- in ${r.message.channel_id}: ${messageLine(r.message)}`)
    return { text: `${results.length} result(s) for "${args.query}":\n${lines.join('\n') || '(nothing found)'}`, structured: { results } }
  },
})

const openDmTool = defineTool({
  name: 'open_dm',
  title: 'Open a direct message',
  description:
    'Opens (or finds) the private DM channel between you and one user or agent, and returns its channel id for post_message and read_messages. Give the participant id (from list_members or list_agents) or an agent name.',
  input: Type.Object(
    { participant: Type.String({ minLength: 1, maxLength: 200, description: 'The id of a user or agent, or the name of an agent such as "research-bot".' }) },
    { additionalProperties: false },
  ),
  output: Type.Object({ dm: DmSchema, created: Type.Boolean({ description: 'Whether the DM was opened just now (false: it existed).' }) }, { additionalProperties: false }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx, args) {
    let participantId = args.participant.trim()
    if (!UUID_RE.test(participantId)) {
      const agent = (await listAgents(ctx.app.ctx)).find((a) => a.name.toLowerCase() === participantId.toLowerCase())
      if (!agent) throw new AppError('NOT_FOUND', `no agent named '${participantId}' (give a user or agent id, or an agent name from list_agents)`)
      participantId = agent.id
    }
    const result = await openDm(ctx.app.ctx, ctx.principal, participantId.toLowerCase())
    const dm = result.body as DmDto
    const verb = result.statusCode === 201 ? 'Opened a new' : 'Found your'
    return { text: `${verb} DM with ${dm.participant.name} (${dm.participant.type}): channel id ${dm.id}.`, structured: { dm, created: result.statusCode === 201 } }
  },
})

const listMembersTool = defineTool({
  name: 'list_members',
  title: 'List channel members',
  description: 'Lists who is in a channel or DM: users and agents, with their ids and types.',
  input: Type.Object({ channel: ChannelRef, limit: ListLimit, offset: Offset }, { additionalProperties: false }),
  output: Type.Object({ channel_id: Uuid, members: Type.Array(MemberSchema), total: Total, next_offset: NextOffset }, { additionalProperties: false }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(ctx, args) {
    const channelId = await resolveChannel(ctx.app, ctx.principal, args.channel)
    const all = await channels.listMembers(ctx.app.ctx, ctx.principal, channelId)
    const { items, next_offset } = page(all, args.offset, args.limit)
    const lines = items.map((m) => `- ${m.name} (${m.type}, id ${m.id})`)
    const more = next_offset !== null ? `\n(${all.length - next_offset} more: call again with offset=${next_offset})` : ''
    return { text: `${all.length} member(s) of ${channelId}:\n${lines.join('\n')}${more}`, structured: { channel_id: channelId, members: items, total: all.length, next_offset } }
  },
})

const listAgentsTool = defineTool({
  name: 'list_agents',
  title: 'List agents',
  description: 'Lists the AI agents of this workspace with their ids, names and descriptions (who they are and what they do).',
  input: Type.Object({ limit: ListLimit, offset: Offset }, { additionalProperties: false }),
  output: Type.Object({ agents: Type.Array(AgentSummary), total: Total, next_offset: NextOffset }, { additionalProperties: false }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(ctx, args) {
    const all = (await listAgents(ctx.app.ctx)).map((a) => ({ id: a.id, name: a.name, display_name: a.display_name, description: a.description, is_primary: a.is_primary }))
    const { items, next_offset } = page(all, args.offset, args.limit)
    const lines = items.map((a) => `- ${a.display_name} (${a.name}, id ${a.id})${a.is_primary ? ' [primary]' : ''}${a.description ? `: ${a.description.slice(0, 300)}` : ''}`)
    const more = next_offset !== null ? `\n(${all.length - next_offset} more: call again with offset=${next_offset})` : ''
    return { text: `${all.length} agent(s):\n${lines.join('\n')}${more}`, structured: { agents: items, total: all.length, next_offset } }
  },
})

const waitForEventsTool = defineTool({
  name: 'wait_for_events',
  title: 'Wait for events (your inbox)',
  description: `Waits until something happens in your channels and DMs (new, edited or deleted messages, members joining or leaving, channels created or changed), then returns those events, oldest first. only="addressed" waits for what concerns you alone (a DM, a mention, a reply in your thread, a reaction to your message); include_own_messages=false leaves your own posts out. For work you must not miss across restarts, prefer wait_for_inbox (acknowledged items). Pass the next_cursor of the previous call as cursor to continue where you left off; without a cursor it waits for events from now on. Returns after timeout_seconds (at most ${WAIT_MAX_SECONDS}) with no events if nothing happened: call it again with the same cursor to keep listening.`,
  input: Type.Object(
    {
      cursor: Type.Optional(Type.String({ pattern: SINCE_PATTERN, description: 'The next_cursor of the previous wait_for_events call; `now` (or none): only events from now on.' })),
      only: Type.Optional(OnlyField),
      include_own_messages: Type.Optional(Type.Boolean({ description: 'false: leave out your own new and edited messages (default true).' })),
      timeout_seconds: defaulted(Type.Number({ minimum: 0, maximum: WAIT_MAX_SECONDS, description: `How long to wait for the first event, 0-${WAIT_MAX_SECONDS} seconds (default 25).` }), 25),
      limit: defaulted(Type.Integer({ minimum: 1, maximum: 100, description: 'At most this many events (1-100, default 50).' }), 50),
    },
    { additionalProperties: false },
  ),
  output: EventPageSchema,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(ctx, args) {
    const { app, principal } = ctx
    const deadline = Date.now() + args.timeout_seconds * 1000
    const filter = { only: args.only ?? null, skipsOwnMessages: args.include_own_messages === false }
    let since = args.cursor !== undefined && args.cursor !== SINCE_NOW ? sinceCursor(args.cursor) : undefined
    if (since === undefined) {
      try {
        since = (await app.realtime.broker.info()).newest
      } catch (error) {
        throw new AppError('SERVICE_UNAVAILABLE', 'the event log is temporarily unavailable; retry later', { cause: error })
      }
    }
    for (;;) {
      const waiter = ctx.inbox.arm(principal.id, new Set(await channelIdsOf(app.ctx, principal.id)))
      try {
        const page = await readEventLog(app, principal, since, args.limit, filter)
        if (page.events.length || page.resync_required) return eventsResult(page.events, page.next_cursor, page.has_more, page.resync_required)
        since = page.next_cursor
        const woken = await waiter.until(deadline - Date.now(), ctx.signals)
        if (!(await ctx.stillValid())) throw new AppError('UNAUTHORIZED', 'your credential was revoked or has expired')
        if (!woken || Date.now() >= deadline) {
          const last = await readEventLog(app, principal, since, args.limit, filter)
          return eventsResult(last.events, last.next_cursor, last.has_more, last.resync_required)
        }
      } finally {
        ctx.inbox.disarm(waiter)
      }
    }
  },
})

function eventsResult(all: EventFrame[], nextCursor: string, hasMore: boolean, resync: boolean): ToolOutput<EventPage> {
  const keep = fitting(all, eventSize)
  const events = all.slice(0, keep).map(boundedEvent)
  const cursor = keep < all.length ? events.at(-1)!.cursor : nextCursor
  const more = hasMore || keep < all.length
  const head = resync
    ? 'Your cursor is older than the retained history: events may have been missed. Re-read the channels you care about with read_messages, then continue with the cursor below.'
    : events.length
      ? `${events.length} event(s), oldest first:`
      : 'No new events.'
  const tail = `\nnext_cursor: ${cursor}${more ? ' (more events are waiting: call again at once)' : ''}`
  return {
    text: `${head}${events.length ? `\n${events.map(eventLine).join('\n')}` : ''}${tail}`,
    structured: { events, next_cursor: cursor, has_more: more, resync_required: resync },
  }
}

// ---- the inbox (docs/realtime.md, "The inbox"; docs/mcp.md) ----

const INBOX_MCP_MAX = 50

function countsLine(c: InboxCounts): string {
  if (!c.total) return 'Inbox: nothing unacknowledged.'
  const kinds = Object.entries(c.by_kind)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')
  const where = c.by_channel.map((ch) => `${ch.type === 'dm' ? 'DM' : '#'}${ch.name} (${ch.channel_id}) ${ch.count}`).join(', ')
  return `Inbox: ${c.total} unacknowledged (${kinds}); by channel: ${where}.`
}

function itemLine(i: InboxItem & { message: McpMessage | null }): string {
  const head = `item ${i.id} [${i.kind}] in ${i.channel_id}`
  if (i.message) return `${head}: ${messageLine(i.message)}`
  if (i.approval) return `${head}: ${approvalLine(i.approval)}`
  if (i.stop) return `${head}: ${i.stop.requested_by_name} (${i.stop.requested_by_id}) asks you to stop streaming msg ${i.stop.message_id}: finish_stream or cancel it`
  const r = i.reaction!
  return `${head}: ${r.member_name} (${r.member_type}, ${r.member_id}) reacted ${r.emoji} on your msg ${r.message_id}`
}

/** A page as MCP answers it: texts cut, the page cut to the budget (the cursor then says where it stopped). */
function inboxResult(page: InboxPage, intro = ''): ToolOutput<InboxPage> {
  const keep = fitting(page.items, (i) => 200 + (i.message ? Math.min(i.message.text.length, MAX_MESSAGE_CHARS) : 0))
  const items = page.items.slice(0, keep).map((i) => (i.message ? { ...i, message: bounded(i.message) } : i))
  const cut = keep < page.items.length
  const structured = { counts: page.counts, items, next_cursor: items.at(-1)?.id ?? null, has_more: page.has_more || cut }
  const lines = items.map(itemLine)
  const tail = items.length ? `\nWhen handled: ack_inbox with up_to=${structured.next_cursor}${structured.has_more ? `; more items follow: read_inbox with after=${structured.next_cursor}` : ''}.` : ''
  return { text: `${intro}${countsLine(page.counts)}${lines.length ? `\n${lines.join('\n')}` : ''}${tail}`, structured }
}

const InboxLimit = defaulted(Type.Integer({ minimum: 1, maximum: INBOX_MCP_MAX, description: `At most this many items (1-${INBOX_MCP_MAX}, default 20).` }), 20)

const checkInboxTool = defineTool({
  name: 'check_inbox',
  title: 'Check your inbox (counts only)',
  description:
    'The cheapest call: how many items addressed to you are waiting (mentions, DMs, replies in your threads, reactions to your messages), by kind and by channel, without reading any. Then read_inbox, or wait_for_inbox when nothing is waiting.',
  input: Type.Object({}, { additionalProperties: false }),
  output: Type.Object({ counts: InboxCountsSchema }, { additionalProperties: false }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(ctx) {
    const counts = await inboxCounts(ctx.app.ctx, ctx.principal)
    return { text: countsLine(counts), structured: { counts } }
  },
})

const readInboxTool = defineTool({
  name: 'read_inbox',
  title: 'Read your inbox',
  description:
    'What is addressed to you and not yet acknowledged, oldest first, with the counts first: messages that mention you, messages in your DMs, replies in threads you started or posted in, reactions to your messages. Items stay until you acknowledge them with ack_inbox (they survive restarts). after=<item id> reads the next page without acknowledging.',
  input: Type.Object({ limit: InboxLimit, after: Type.Optional({ ...Uuid, description: 'The next_cursor of the previous read_inbox: the page after it.' }) }, { additionalProperties: false }),
  output: InboxPageSchema,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(ctx, args) {
    return inboxResult(await readInbox(ctx.app.ctx, ctx.principal, { limit: args.limit, ...(args.after ? { after: args.after.toLowerCase() } : {}) }))
  },
})

const waitForInboxTool = defineTool({
  name: 'wait_for_inbox',
  title: 'Wait for your inbox',
  description: `Returns at once when items addressed to you are waiting; otherwise waits (at most timeout_seconds, up to ${WAIT_MAX_SECONDS}) until one arrives, then returns everything that accumulated, counts first. Nothing from your own posts or from conversations that do not concern you wakes it. Acknowledge what you handled with ack_inbox, or the same items come back.`,
  input: Type.Object(
    {
      timeout_seconds: defaulted(Type.Number({ minimum: 0, maximum: WAIT_MAX_SECONDS, description: `How long to wait, 0-${WAIT_MAX_SECONDS} seconds (default 25).` }), 25),
      limit: InboxLimit,
    },
    { additionalProperties: false },
  ),
  output: InboxPageSchema,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(ctx, args) {
    const page = await waitForInbox(ctx.app.ctx, ctx.principal, { limit: args.limit }, args.timeout_seconds * 1000, AbortSignal.any(ctx.signals))
    if (!page.items.length && !(await ctx.stillValid())) throw new AppError('UNAUTHORIZED', 'your credential was revoked or has expired')
    return inboxResult(page, page.items.length ? '' : 'Nothing arrived. ')
  },
})

const ackInboxTool = defineTool({
  name: 'ack_inbox',
  title: 'Acknowledge inbox items',
  description:
    'Records that you handled inbox items, so they never come back (also after a restart): up_to=<item id> acknowledges every item up to and including it (the next_cursor of read_inbox or wait_for_inbox), ids=[...] acknowledges those. Give one of the two. Answers the counts left.',
  input: Type.Object(
    {
      up_to: Type.Optional({ ...Uuid, description: 'Acknowledge every item up to and including this one.' }),
      ids: Type.Optional(Type.Array(Uuid, { minItems: 1, maxItems: ACK_IDS_MAX, uniqueItems: true, description: `These items (at most ${ACK_IDS_MAX}).` })),
    },
    { additionalProperties: false },
  ),
  output: AckResultSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx, args) {
    if ((args.up_to === undefined) === (args.ids === undefined)) throw badRequest('give either up_to or ids (one of the two)')
    const result = await acknowledgeInbox(ctx.app.ctx, ctx.principal, args.up_to !== undefined ? { up_to: args.up_to.toLowerCase() } : { ids: args.ids!.map((id) => id.toLowerCase()) })
    return { text: `Acknowledged ${result.acknowledged} item(s). ${countsLine(result.counts)}`, structured: result }
  },
})

const reactTool = defineTool({
  name: 'react',
  title: 'React to a message',
  description:
    'Adds (or with remove: true, takes back) your emoji reaction on a message. Use it as a cheap acknowledgement instead of a reply: 👀 when you start working on a request, ✅ when it is done. Reacting twice is one reaction. The emoji is one emoji character or a :shortcode:.',
  input: Type.Object(
    {
      channel: ChannelRef,
      message_id: MessageId,
      emoji: Type.String({ minLength: 1, maxLength: 64, description: 'One emoji (e.g. 👀, ✅, 👍) or a shortcode like :shipit:.' }),
      remove: Type.Optional(Type.Boolean({ description: 'true: take your reaction back instead.' })),
    },
    { additionalProperties: false },
  ),
  output: MessageReactionsSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx, args) {
    const channelId = await resolveChannel(ctx.app, ctx.principal, args.channel)
    const result = await setReaction(ctx.app.ctx, ctx.principal, channelId, args.message_id, args.emoji, !args.remove)
    const summary = result.reactions.map((r) => `${r.emoji} ${r.count}${r.reacted ? ' (you)' : ''}`).join(', ') || 'none'
    return { text: `${args.remove ? 'Took back' : 'Reacted'} ${args.emoji} on message ${args.message_id}. Reactions now: ${summary}.`, structured: result }
  },
})

// ---- approvals (docs/approvals.md) ----

const ApprovalResult = Type.Object(
  {
    approval: ApprovalSchema,
    done: Type.Boolean({ description: 'true once decided, cancelled or expired; false: still pending (call request_approval again with message_id to keep waiting).' }),
  },
  { additionalProperties: false },
)

function approvalResult(approval: ApprovalDto): ToolOutput<Static<typeof ApprovalResult>> {
  const done = approval.status !== 'pending'
  const text = done
    ? approvalLine(approval)
    : `Approval on msg ${approval.message_id} for ${approval.action} is still pending (expires ${approval.expires_at}). Call request_approval again with message_id=${approval.message_id} to keep waiting, or get_approval later.`
  return { text, structured: { approval, done } }
}

/**
 * Waits (bounded) for a pending approval to be settled: armed before each read, so a decision
 * landing between the read and the wait still wakes it.
 */
async function waitForApproval(ctx: ToolContext, channelId: string, messageId: string, seconds: number): Promise<ApprovalDto> {
  const deadline = Date.now() + seconds * 1000
  for (;;) {
    const waiter = ctx.inbox.arm(ctx.principal.id, new Set([channelId]))
    try {
      const approval = await getApproval(ctx.app.ctx, ctx.principal, channelId, messageId)
      if (approval.status !== 'pending' || Date.now() >= deadline) return approval
      await waiter.until(deadline - Date.now(), ctx.signals)
      if (!(await ctx.stillValid())) throw new AppError('UNAUTHORIZED', 'your credential was revoked or has expired')
      if (ctx.signals.some((s) => s.aborted)) return await getApproval(ctx.app.ctx, ctx.principal, channelId, messageId)
    } finally {
      ctx.inbox.disarm(waiter)
    }
  }
}

const request = ApprovalRequestSchema.properties

const requestApprovalTool = defineTool({
  name: 'request_approval',
  title: 'Ask a person to approve an action',
  description: `Before doing something that needs a person's consent, ask in the conversation: posts a message carrying an approval request (action, arguments as a JSON object, summary; optionally choices "edit" to let the approver change the arguments and "respond" for a free-text answer), then waits up to wait_seconds (at most ${WAIT_MAX_SECONDS}) for the decision. If it is still pending, call again with message_id to keep waiting (nothing is posted again). When done: status approved → run the action with final_arguments (they may differ from yours after "edit"); denied → do not run it (read comment for a "respond" answer); expired → on_expiry decided; cancelled → you withdrew it.`,
  input: Type.Object(
    {
      channel: ChannelRef,
      message_id: Type.Optional({ ...MessageId, description: 'Resume: wait for the request of this message (posted earlier) instead of posting a new one.' }),
      action: Type.Optional(request.action),
      arguments: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description: 'What the action would be run with (a JSON object; default {}).' })),
      summary: Type.Optional(request.summary),
      text: Type.Optional(Type.String({ maxLength: 40_000, description: 'The message text people read (default: the summary).' })),
      choices: request.choices,
      approvers: request.approvers,
      expires_in: request.expires_in,
      on_expiry: request.on_expiry,
      thread_id: Type.Optional(Type.String({ format: 'uuid', description: 'Ask in the thread of this root message.' })),
      idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Retrying with the same key and content returns the first request instead of asking twice.' })),
      wait_seconds: defaulted(Type.Number({ minimum: 0, maximum: WAIT_MAX_SECONDS, description: `How long to wait for the decision, 0-${WAIT_MAX_SECONDS} seconds (default 25).` }), 25),
    },
    { additionalProperties: false },
  ),
  output: ApprovalResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(ctx, args) {
    const channelId = await resolveChannel(ctx.app, ctx.principal, args.channel)
    let messageId = args.message_id?.toLowerCase()
    if (!messageId) {
      if (args.action === undefined || args.summary === undefined) throw badRequest('give action and summary to ask, or message_id to wait for an earlier request')
      const text = args.text ?? args.summary
      const result = await messages.createMessage(ctx.app.ctx, ctx.principal, channelId, {
        text,
        idempotencyKey: args.idempotency_key,
        threadId: args.thread_id,
        approval: {
          action: args.action,
          summary: args.summary,
          ...(args.arguments !== undefined ? { arguments: args.arguments } : {}),
          ...(args.choices ? { choices: args.choices } : {}),
          ...(args.approvers ? { approvers: args.approvers } : {}),
          ...(args.expires_in !== undefined ? { expires_in: args.expires_in } : {}),
          ...(args.on_expiry ? { on_expiry: args.on_expiry } : {}),
        },
      })
      messageId = (result.body as MessageDto).id
    }
    return approvalResult(await waitForApproval(ctx, channelId, messageId, args.wait_seconds))
  },
})

const getApprovalTool = defineTool({
  name: 'get_approval',
  title: 'Read an approval request',
  description:
    'Reads the state of an approval request you (or another agent) posted: pending, approved (run with final_arguments), denied, expired or cancelled, with who decided and their comment. Does not wait: request_approval with message_id waits.',
  input: Type.Object({ channel: ChannelRef, message_id: MessageId }, { additionalProperties: false }),
  output: ApprovalResult,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run(ctx, args) {
    const channelId = await resolveChannel(ctx.app, ctx.principal, args.channel)
    return approvalResult(await getApproval(ctx.app.ctx, ctx.principal, channelId, args.message_id.toLowerCase()))
  },
})

export const TOOLS: Tool[] = [
  whoami,
  listChannelsTool,
  readMessagesTool,
  postMessageTool,
  startStreamTool,
  appendStreamTool,
  finishStreamTool,
  setStatusTool,
  readThreadTool,
  editMessageTool,
  deleteMessageTool,
  reactTool,
  searchMessagesTool,
  openDmTool,
  listMembersTool,
  listAgentsTool,
  waitForEventsTool,
  checkInboxTool,
  readInboxTool,
  waitForInboxTool,
  ackInboxTool,
  markReadTool,
  requestApprovalTool,
  getApprovalTool,
]
