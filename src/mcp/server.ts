// One MCP server (the SDK's low-level Server) per session: the tools of ./tools.ts, channels as
// resources (ams://channels/{id}: the channel and its recent history, subscribable), and prompts.
// Schemas are TypeBox (plain JSON Schema), checked here before a tool runs. The principal is the
// session's, refreshed by every authenticated request (src/mcp/plugin.ts).
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js'
import type { FastifyInstance } from 'fastify'
import type { TSchema } from 'typebox'
import Value from 'typebox/value'
import { AppError, badRequest, notFound } from '../lib/errors.ts'
import * as channels from '../modules/channels/service.ts'
import { readEventLog } from '../realtime/event-log/service.ts'
import * as messages from '../modules/messages/service.ts'
import { toAppError } from '../plugins/errors.ts'
import { sinceCursor, SINCE_PATTERN } from '../realtime/cursor.ts'
import { bounded, fitting, MAX_MESSAGE_CHARS, messageLine } from './format.ts'
import type { Inbox } from './inbox.ts'
import type { McpSession } from './sessions.ts'
import { resolveChannel, TOOLS, type ToolContext } from './tools.ts'

export const SERVER_NAME = 'agent-messaging-service'
export const CHANNEL_URI_PREFIX = 'ams://channels/'
const RESOURCE_HISTORY = 50
const RESOURCE_LIST_MAX = 200

const INSTRUCTIONS = `You are connected to a workspace messaging hub where AI agents and humans talk in channels and direct messages (DMs).
Start with whoami and list_channels. read_messages reads a channel (oldest to newest); post_message writes as you, and everyone in the channel sees it at once.
To follow conversations, call wait_for_events in a loop, each time with the next_cursor it returned: it is your inbox.
Channels are also resources (ams://channels/{id}) you can subscribe to. Errors carry a code such as NOT_FOUND (no such channel, or one you cannot read), FORBIDDEN or VALIDATION_ERROR.`

const toolsByName = new Map(TOOLS.map((t) => [t.name, t]))
const toolList = TOOLS.map((t) => ({
  name: t.name,
  title: t.title,
  description: t.description,
  // TypeBox schemas are JSON Schema; a JSON round trip drops TypeBox's own symbol keys.
  inputSchema: JSON.parse(JSON.stringify(t.inputSchema)) as { type: 'object'; properties?: Record<string, object>; required?: string[] },
  annotations: { title: t.title, ...t.annotations },
}))

export interface ServerDeps {
  app: FastifyInstance
  inbox: Inbox
  session: McpSession
}

/** The REST error of a failure: AppErrors as they are, anything else as a logged INTERNAL_ERROR. */
function asAppError(app: FastifyInstance, error: unknown): AppError {
  const known = toAppError(error)
  if (known) return known
  app.log.error({ err: error }, 'MCP request failed')
  return new AppError('INTERNAL_ERROR', 'internal server error')
}

function toolError(error: AppError): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}` }], structuredContent: { error: error.message, code: error.code } }
}

/** A failure of a resource or prompt request: a JSON-RPC error whose data is the REST {error, code}. */
function protocolError(error: AppError): McpError {
  const code = error.code === 'NOT_FOUND' ? -32002 : error.statusCode < 500 ? ErrorCode.InvalidParams : ErrorCode.InternalError
  return new McpError(code, `${error.code}: ${error.message}`, { error: error.message, code: error.code })
}

function validationMessage(schema: TSchema, value: unknown): string {
  const errors = Value.Errors(schema, value)
  const unknown = errors.find((e) => e.keyword === 'additionalProperties')
  if (unknown) {
    const names = (unknown.params as { additionalProperties?: string[] }).additionalProperties ?? []
    const where = unknown.instancePath ? ` in '${unknown.instancePath.replace(/^\//, '').replaceAll('/', '.')}'` : ''
    return `unknown argument '${names.join("', '")}'${where}`
  }
  const first = errors[0]
  if (!first) return 'invalid arguments'
  if (first.keyword === 'required') return `missing argument '${((first.params as { requiredProperties?: string[] }).requiredProperties ?? []).join("', '")}'`
  const field = first.instancePath.replace(/^\//, '').replaceAll('/', '.')
  return `invalid argument${field ? ` '${field}'` : ''}: ${first.message}`
}

function channelIdOf(uri: string): string {
  if (!uri.startsWith(CHANNEL_URI_PREFIX)) throw notFound(`resource ${uri}`)
  const id = uri.slice(CHANNEL_URI_PREFIX.length)
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw notFound('channel')
  return id.toLowerCase()
}

/** A channel as a model reads it: name, description, then its recent messages, oldest first. */
async function renderChannel(app: FastifyInstance, session: McpSession, channelId: string, after?: string): Promise<string> {
  const channel = await channels.getChannel(app, session.principal, channelId)
  const result = await messages.listMessages(app, session.principal, channelId, { limit: RESOURCE_HISTORY, after })
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

export function createMcpServer({ app, inbox, session }: ServerDeps): Server {
  const server = new Server(
    { name: SERVER_NAME, title: 'Agent Messaging Service', version: '1.0.0' },
    {
      capabilities: { tools: {}, resources: { subscribe: true }, prompts: {} },
      instructions: INSTRUCTIONS,
    },
  )

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolList }))

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const definition = toolsByName.get(request.params.name)
    if (!definition) throw new McpError(ErrorCode.InvalidParams, `unknown tool '${request.params.name}' (tools/list shows the tools)`)
    const args: unknown = Value.Default(definition.inputSchema, structuredClone(request.params.arguments ?? {}))
    if (!Value.Check(definition.inputSchema, args)) return toolError(badRequest(validationMessage(definition.inputSchema, args)))
    const ctx: ToolContext = {
      app,
      principal: session.principal,
      inbox,
      signals: [extra.signal, session.closed.signal],
      stillValid: async () => (await app.authenticate(session.credential)) !== null,
    }
    try {
      const result = await definition.run(ctx, args)
      return { content: [{ type: 'text', text: result.text }], structuredContent: result.structured }
    } catch (error) {
      return toolError(asAppError(app, error))
    }
  })

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    try {
      const list = (await channels.listChannels(app, session.principal)).slice(0, RESOURCE_LIST_MAX)
      return {
        resources: list.map((c) => ({
          uri: `${CHANNEL_URI_PREFIX}${c.id}`,
          name: c.type === 'dm' ? `dm-${c.name}` : c.name,
          title: c.type === 'dm' ? `DM with ${c.name}` : `#${c.name}`,
          description: c.description || (c.type === 'dm' ? `Direct messages with ${c.name}` : `Channel #${c.name}`),
          mimeType: 'text/plain',
        })),
      }
    } catch (error) {
      throw protocolError(asAppError(app, error))
    }
  })

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
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

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    try {
      const channelId = channelIdOf(request.params.uri)
      return { contents: [{ uri: request.params.uri, mimeType: 'text/plain', text: await renderChannel(app, session, channelId) }] }
    } catch (error) {
      throw protocolError(asAppError(app, error))
    }
  })

  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    try {
      const channelId = channelIdOf(request.params.uri)
      await channels.getChannel(app, session.principal, channelId) // 404 unless readable
      session.subscriptions.add(channelId)
      return {}
    } catch (error) {
      throw protocolError(asAppError(app, error))
    }
  })

  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    if (request.params.uri.startsWith(CHANNEL_URI_PREFIX)) session.subscriptions.delete(request.params.uri.slice(CHANNEL_URI_PREFIX.length).toLowerCase())
    return {}
  })

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: PROMPTS }))

  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    try {
      const args = request.params.arguments ?? {}
      switch (request.params.name) {
        case 'summarize_channel':
          return await summarizeChannel(app, session, args)
        case 'catch_up':
          return await catchUp(app, session, args)
        default:
          throw new McpError(ErrorCode.InvalidParams, `unknown prompt '${request.params.name}'`)
      }
    } catch (error) {
      if (error instanceof McpError) throw error
      throw protocolError(asAppError(app, error))
    }
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

async function summarizeChannel(app: FastifyInstance, session: McpSession, args: Record<string, string>): Promise<PromptResult> {
  if (!args.channel) throw badRequest("the prompt needs a 'channel'")
  const channelId = await resolveChannel(app, session.principal, args.channel)
  if (args.since !== undefined && !/^[0-9a-f-]{36}$/i.test(args.since)) throw badRequest("'since' must be a message id")
  const transcript = await renderChannel(app, session, channelId, args.since)
  const scope = args.since ? `the messages posted after message ${args.since}` : 'the recent messages'
  return userPrompt(
    `Summary of ${scope} in ${channelId}`,
    `Summarise ${scope} of this channel for me. Lead with decisions and open questions, then who asked me (or agents like me) for something, then anything else worth knowing. Be brief; quote message ids when pointing at a message.\n\n${transcript}`,
  )
}

async function catchUp(app: FastifyInstance, session: McpSession, args: Record<string, string>): Promise<PromptResult> {
  if (!args.since || !new RegExp(SINCE_PATTERN).test(args.since)) throw badRequest("'since' must be a cursor returned by wait_for_events")
  const page = await readEventLog(app, session.principal, sinceCursor(args.since), 100)
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
