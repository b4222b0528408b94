// One MCP server (the SDK's low-level Server) per 2025-era session or per 2026-era request, the
// same for both revisions: the tools of ./tools.ts, channels as resources (ams://channels/{id}: the
// channel and its recent history, paged in `resources/list`), and prompts. The SDK speaks the
// protocol (each revision's wire shape, `server/discover`, `resultType`, cache fields); this file
// only answers the methods, as the caller (src/mcp/caller.ts). Change notifications are the
// watchers' job (src/mcp/watchers.ts): `resources/subscribe` here for 2025 sessions,
// `subscriptions/listen` in src/mcp/modern.ts for 2026 clients.
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, Server, type CacheHint } from '@modelcontextprotocol/server'
import type { FastifyInstance } from 'fastify'
import { AppError, badRequest, notFound } from '../lib/errors.ts'
import * as channels from '../modules/channels/service.ts'
import * as messages from '../modules/messages/service.ts'
import { readEventLog } from '../realtime/event-log/service.ts'
import { SINCE_NOW, sinceCursor, SINCE_PATTERN } from '../realtime/cursor.ts'
import type { McpCaller } from './caller.ts'
import { bounded, fitting, MAX_MESSAGE_CHARS, messageLine } from './format.ts'
import type { Inbox } from './inbox.ts'
import { asAppError, type ToolContext } from './tool.ts'
import { resolveChannel, TOOLS } from './tools.ts'

export const SERVER_NAME = 'agent-messaging-service'
export const SERVER_VERSION = '1.0.0'
export const CHANNEL_URI_PREFIX = 'ams://channels/'
const RESOURCE_HISTORY = 50
/** Channels per `resources/list` page; `nextCursor` leads to the next. */
export const RESOURCE_PAGE_SIZE = 100

const INSTRUCTIONS = `You are connected to a workspace messaging hub where AI agents and humans talk in channels and direct messages (DMs).
Start with whoami and list_channels. read_messages reads a channel (oldest to newest); post_message writes as you, and everyone in the channel sees it at once.
To follow conversations, call wait_for_events in a loop, each time with the next_cursor it returned: it is your inbox.
Channels are also resources (ams://channels/{id}) you can subscribe to. Errors carry a code such as NOT_FOUND (no such channel, or one you cannot read), FORBIDDEN or VALIDATION_ERROR.`

/** The same for every caller and every deploy's lifetime: shared caches may keep them a while. */
const STATIC_LIST: CacheHint = { ttlMs: 300_000, cacheScope: 'public' }
/** A caller's own channels and their live history: never shared, always re-read. */
const PER_CALLER: CacheHint = { ttlMs: 0, cacheScope: 'private' }
const CACHE_HINTS = {
  'server/discover': STATIC_LIST,
  'tools/list': STATIC_LIST,
  'prompts/list': STATIC_LIST,
  'resources/templates/list': STATIC_LIST,
  'resources/list': PER_CALLER,
  'resources/read': PER_CALLER,
}

const toolsByName = new Map(TOOLS.map((t) => [t.name, t]))
const toolList = TOOLS.map((t) => t.listing)

export interface ServerDeps {
  app: FastifyInstance
  inbox: Inbox
  caller: McpCaller
  /**
   * A 2025-era session's subscribed channel ids: `resources/subscribe` and `unsubscribe` answer
   * only on such a session (the 2026 revision subscribes with `subscriptions/listen`).
   */
  subscriptions?: Set<string>
}

/** A failure of a resource or prompt request: a JSON-RPC error whose data is the REST {error, code}. */
function protocolError(error: AppError): ProtocolError {
  const code = error.statusCode < 500 ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InternalError
  return new ProtocolError(code, `${error.code}: ${error.message}`, { error: error.message, code: error.code })
}

/** A resource request's failure; a channel that does not exist or is not the caller's is "resource not found". */
function resourceError(app: FastifyInstance, uri: string, error: unknown): ProtocolError {
  const appError = asAppError(app, error)
  if (appError.code === 'NOT_FOUND') return new ResourceNotFoundError(uri, `NOT_FOUND: ${appError.message}`)
  return protocolError(appError)
}

export function channelIdOf(uri: string): string {
  if (!uri.startsWith(CHANNEL_URI_PREFIX)) throw notFound(`resource ${uri}`)
  const id = uri.slice(CHANNEL_URI_PREFIX.length)
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw notFound('channel')
  return id.toLowerCase()
}

/** `resources/list` cursors are opaque to clients: the offset of the next page. */
const encodeCursor = (offset: number): string => Buffer.from(`offset:${offset}`).toString('base64url')

function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0
  const match = /^offset:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString())
  if (!match) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'invalid cursor: pass the nextCursor of the previous page, or none for the first page')
  return Number(match[1])
}

/** A channel as a model reads it: name, description, then its recent messages, oldest first. */
async function renderChannel(app: FastifyInstance, caller: McpCaller, channelId: string, after?: string): Promise<string> {
  const channel = await channels.getChannel(app.ctx, caller.principal, channelId)
  const result = await messages.listMessages(app.ctx, caller.principal, channelId, { limit: RESOURCE_HISTORY, after })
  const ordered = after ? [...result.messages].reverse() : result.messages
  const keep = fitting(ordered, (m) => Math.min(m.text.length, MAX_MESSAGE_CHARS) + 200)
  const kept = ordered.slice(0, keep).map(bounded)
  const chronological = after ? kept : [...kept].reverse()
  const title = channel.type === 'dm' ? `DM ${channel.id}` : `#${channel.name}`
  const about = [channel.description, channel.topic ? `Topic: ${channel.topic}` : ''].filter(Boolean).join('\n')
  const more = result.has_more || keep < ordered.length
  const note = more ? (after ? '\n(more newer messages: use read_messages)' : '\n(older messages: use read_messages with before)') : ''
  return `${title} (id ${channel.id}, ${channel.member_count} members)\n${about ? `${about}\n` : ''}\n${chronological.map(messageLine).join('\n') || '(no messages)'}${note}`
}

export function createMcpServer({ app, inbox, caller, subscriptions }: ServerDeps): Server {
  const server = new Server(
    { name: SERVER_NAME, title: 'Agent Messaging Service', version: SERVER_VERSION },
    {
      capabilities: { tools: {}, resources: { subscribe: true }, prompts: {} },
      instructions: INSTRUCTIONS,
      cacheHints: CACHE_HINTS,
    },
  )

  server.setRequestHandler('tools/list', () => ({ tools: toolList }))

  server.setRequestHandler('tools/call', async (request, ctx) => {
    const tool = toolsByName.get(request.params.name)
    if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown tool '${request.params.name}' (tools/list shows the tools)`)
    const context: ToolContext = {
      app,
      principal: caller.principal,
      inbox,
      signals: [ctx.mcpReq.signal, caller.closed.signal],
      stillValid: async () => (await app.authenticate(caller.credential)) !== null,
    }
    return tool.call(context, request.params.arguments)
  })

  server.setRequestHandler('resources/list', async (request) => {
    const offset = decodeCursor(request.params?.cursor)
    try {
      const all = await channels.listChannels(app.ctx, caller.principal)
      const page = all.slice(offset, offset + RESOURCE_PAGE_SIZE)
      const next = offset + page.length < all.length ? encodeCursor(offset + page.length) : undefined
      return {
        resources: page.map((c) => ({
          uri: `${CHANNEL_URI_PREFIX}${c.id}`,
          name: c.type === 'dm' ? `dm-${c.name}` : c.name,
          title: c.type === 'dm' ? `DM with ${c.name}` : `#${c.name}`,
          description: c.description || (c.type === 'dm' ? `Direct messages with ${c.name}` : `Channel #${c.name}`),
          mimeType: 'text/plain',
        })),
        ...(next ? { nextCursor: next } : {}),
      }
    } catch (error) {
      throw protocolError(asAppError(app, error))
    }
  })

  server.setRequestHandler('resources/templates/list', () => ({
    resourceTemplates: [
      {
        uriTemplate: `${CHANNEL_URI_PREFIX}{channel_id}`,
        name: 'channel',
        title: 'Channel history',
        description: `A channel or DM you can read, with its newest ${RESOURCE_HISTORY} messages (oldest first). Subscribe to be told when it changes.`,
        mimeType: 'text/plain',
      },
    ],
  }))

  server.setRequestHandler('resources/read', async (request) => {
    const { uri } = request.params
    try {
      return { contents: [{ uri, mimeType: 'text/plain', text: await renderChannel(app, caller, channelIdOf(uri)) }] }
    } catch (error) {
      throw resourceError(app, uri, error)
    }
  })

  if (subscriptions) {
    server.setRequestHandler('resources/subscribe', async (request) => {
      const { uri } = request.params
      try {
        const channelId = channelIdOf(uri)
        await channels.getChannel(app.ctx, caller.principal, channelId) // 404 unless readable
        subscriptions.add(channelId)
        return {}
      } catch (error) {
        throw resourceError(app, uri, error)
      }
    })
    server.setRequestHandler('resources/unsubscribe', (request) => {
      if (request.params.uri.startsWith(CHANNEL_URI_PREFIX)) subscriptions.delete(request.params.uri.slice(CHANNEL_URI_PREFIX.length).toLowerCase())
      return {}
    })
  }

  server.setRequestHandler('prompts/list', () => ({ prompts: PROMPTS }))

  server.setRequestHandler('prompts/get', async (request) => {
    const args = request.params.arguments ?? {}
    try {
      switch (request.params.name) {
        case 'summarize_channel':
          return await summarizeChannel(app, caller, args)
        case 'catch_up':
          return await catchUp(app, caller, args)
      }
    } catch (error) {
      throw protocolError(asAppError(app, error))
    }
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown prompt '${request.params.name}' (prompts/list shows the prompts)`)
  })

  return server
}

const PROMPTS = [
  {
    name: 'summarize_channel',
    title: 'Summarise a channel',
    description: 'Summarise a channel or DM: its recent messages, or those since a message you last read.',
    arguments: [
      { name: 'channel', description: 'Channel id or name, e.g. "general".', required: true },
      { name: 'since', description: 'Optional: the id of the last message you read; only newer messages are summarised.', required: false },
    ],
  },
  {
    name: 'catch_up',
    title: 'Catch up on my channels',
    description: 'What happened in all your channels since a wait_for_events cursor, and what needs your reply.',
    arguments: [{ name: 'since', description: 'A next_cursor returned by wait_for_events.', required: true }],
  },
]

type PromptResult = { description: string; messages: { role: 'user'; content: { type: 'text'; text: string } }[] }

const userPrompt = (description: string, text: string): PromptResult => ({ description, messages: [{ role: 'user', content: { type: 'text', text } }] })

async function summarizeChannel(app: FastifyInstance, caller: McpCaller, args: Record<string, string>): Promise<PromptResult> {
  if (!args.channel) throw badRequest("the prompt needs a 'channel'")
  const channelId = await resolveChannel(app, caller.principal, args.channel)
  if (args.since !== undefined && !/^[0-9a-f-]{36}$/i.test(args.since)) throw badRequest("'since' must be a message id")
  const transcript = await renderChannel(app, caller, channelId, args.since)
  const scope = args.since ? `the messages posted after message ${args.since}` : 'the recent messages'
  return userPrompt(
    `Summary of ${scope} in ${channelId}`,
    `Summarise ${scope} of this channel for me. Lead with decisions and open questions, then who asked me (or agents like me) for something, then anything else worth knowing. Be brief; quote message ids when pointing at a message.\n\n${transcript}`,
  )
}

async function catchUp(app: FastifyInstance, caller: McpCaller, args: Record<string, string>): Promise<PromptResult> {
  if (!args.since || !new RegExp(SINCE_PATTERN).test(args.since)) throw badRequest("'since' must be a cursor returned by wait_for_events")
  const since = args.since === SINCE_NOW ? (await app.realtime.broker.info()).newest : sinceCursor(args.since)
  const page = await readEventLog(app, caller.principal, since, 100)
  const posts = page.events.filter((e) => e.type === 'new_message' || e.type === 'message_updated')
  const keep = fitting(posts, (e) => ('message' in e ? Math.min(e.message.text.length, MAX_MESSAGE_CHARS) : 0) + 200)
  const lines = posts.slice(0, keep).map((e) => ('message' in e ? `in ${e.channel_id}: ${messageLine(bounded(e.message))}` : ''))
  const gap = page.resync_required ? '\n(Your cursor is older than the retained history; some messages are missing. Use read_messages for full channels.)' : ''
  const more = page.has_more || keep < posts.length ? `\n(More happened after these; continue with wait_for_events from cursor ${page.next_cursor}.)` : ''
  return userPrompt(
    'Catch up on my channels',
    `Here is what was posted in my channels since cursor ${args.since}. Tell me briefly what happened, and list the messages that need my reply (channel id and message id), most urgent first.\n\n${lines.join('\n') || '(nothing new)'}${gap}${more}`,
  )
}
