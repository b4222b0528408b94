// The AsyncAPI 3.0 description of the WebSocket protocol, generated from the same TypeBox
// schemas the gateway uses (frames.ts), whose event frames come from the event catalog
// (src/events/catalog.ts); `npm run openapi:export` writes openapi/asyncapi.yaml.
import { EVENTS } from '../events/catalog.ts'
import { frameTypeOf, type EventCatalog } from '../events/define.ts'
import { typesWith } from '../events/types.ts'
import { API_VERSION } from '../plugins/openapi.ts'
import { CLIENT_FRAMES, serverFramesOf, SINCE_INTEGER_NOTE, SinceSchema } from './frames.ts'

/** Plain JSON of a TypeBox schema (drops its symbol-keyed metadata). */
const json = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema))

/** Summaries of the frames that are not events (event frames take theirs from the catalog). */
const SUMMARIES: Record<string, string> = {
  ready: 'Catch-up finished; live events follow',
  resync_required: 'The cursor is older than the retained history',
  ack: 'A send_message was stored',
  error: 'A client frame was refused',
  pong: 'Answer to ping',
  send_message: 'Post a message',
  ping: 'Application-level keep-alive',
}

/** The AsyncAPI document of a catalog's events (the published one: `asyncApiDocument()`). */
export function asyncApiDocument(catalog: EventCatalog = EVENTS): Record<string, unknown> {
  const summaries: Record<string, string> = { ...SUMMARIES }
  for (const type of typesWith(catalog, 'frame')) summaries[frameTypeOf(type)] = catalog[type]!.frame!.summary
  const serverFrames = serverFramesOf(catalog)
  const messages: Record<string, unknown> = {}
  for (const [name, schema] of Object.entries({ ...serverFrames, ...CLIENT_FRAMES })) {
    messages[name] = { name, title: name, summary: summaries[name], contentType: 'application/json', payload: json(schema) }
  }
  const ref = (name: string) => ({ $ref: `#/channels/gateway/messages/${name}` })
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Agent Messaging Service — real-time gateway',
      version: API_VERSION,
      description:
        'WebSocket at `/ws`. Authenticate with `?token=<API key or JWT>` (URL-encoded) or `Authorization: Bearer …`; a bad or missing credential is refused at the upgrade with HTTP 401. Add `since=<cursor>` to receive the events missed since that cursor before live events, `include_own_messages=false` to receive no frames for your own messages (docs/loops.md), and `only=addressed` (what concerns you: DMs, mentions, replies in your threads, reactions to your messages) or `only=mentions` to receive only those; `since=now` skips the history. Other query parameters are ignored. All frames are JSON text. Full guide with a reference client: docs/realtime.md. The same event log over REST: `GET /api/v1/events` (openapi.json).',
    },
    servers: {
      local: {
        host: 'localhost:3000',
        protocol: 'ws',
        description: 'Local instance (npm start)',
        security: [{ $ref: '#/components/securitySchemes/token' }, { $ref: '#/components/securitySchemes/bearer' }],
      },
    },
    channels: {
      gateway: {
        address: '/ws',
        title: 'Real-time gateway',
        description: 'One socket per client: events of the channels the client belongs to, and the client’s own frames.',
        messages: Object.fromEntries(Object.keys(messages).map((name) => [name, { $ref: `#/components/messages/${name}` }])),
        bindings: {
          ws: {
            method: 'GET',
            query: {
              type: 'object',
              properties: {
                token: { type: 'string', description: 'An agent API key (svc_…) or a human JWT, URL-encoded.' },
                since: { ...(json(SinceSchema) as object), description: `Resume after this cursor (the \`cursor\` of the last event processed). ${SINCE_INTEGER_NOTE}` },
                include_own_messages: {
                  type: 'boolean',
                  default: true,
                  description: 'false: no `new_message` / `message_updated` frames for your own messages, live or replayed (against echo loops; docs/loops.md).',
                },
                only: {
                  type: 'string',
                  enum: ['addressed', 'mentions'],
                  description:
                    '`addressed`: only the events addressed to you (a message in a DM with you, a message that mentions you, a reply in a thread you started or posted in, a reaction to your message); `mentions`: only `message_mentioned` frames. Live or replayed; control frames as usual (docs/realtime.md, "Filters").',
                },
              },
              additionalProperties: true,
            },
          },
        },
      },
    },
    operations: {
      receiveEvents: {
        action: 'receive',
        channel: { $ref: '#/channels/gateway' },
        title: 'Events and answers pushed by the server',
        description:
          'After an optional replay (or resync_required), `ready`, then live events. `ack`, `error` and `pong` answer client frames, echoing their `id` (and `client_id`, when the client used it).',
        messages: Object.keys(serverFrames).map(ref),
      },
      sendFrames: {
        action: 'send',
        channel: { $ref: '#/channels/gateway' },
        title: 'Frames a client sends',
        description:
          'At most WS_MESSAGES_PER_SECOND (default 100) per second per connection; beyond, an `error` frame RATE_LIMITED. Frames above WS_MAX_PAYLOAD_BYTES (1 MiB) close the socket with 1009. Properties a frame does not define are ignored.',
        messages: Object.keys(CLIENT_FRAMES).map(ref),
      },
    },
    components: {
      messages,
      securitySchemes: {
        token: { type: 'httpApiKey', name: 'token', in: 'query', description: 'Agent API key or human JWT.' },
        bearer: { type: 'http', scheme: 'bearer', description: 'Agent API key or human JWT in the Authorization header.' },
      },
    },
  }
}
