// The floor of `bench:realtime` (issue 27): the bare pipeline a posted message has to go through,
// with nothing of the product around it, so that the real server's cost can be stated as a ratio
// to it measured in the same run. Fastify POST with a JSON schema → one pg INSERT → XADD to one
// Redis stream → XREAD → ws.send of one ready-made frame to each socket of the channel.
//
// It speaks the part of the real protocol the load generator uses: `GET /health`, `/ws?token=KEY`
// (answers a `ready` frame, then `new_message` frames), `POST /api/v1/channels/{id}/messages`
// `{text}` with `Authorization: Bearer KEY` (201 with the message). Keys and memberships are read
// once at start from the database the benchmark seeded (the real server caches both too).
// What it leaves out is what the ratio measures: access rules, idempotency, the loop guard, the
// outbox and its relay, the event catalog's envelope, presence, metrics, rate limits, logging.
//
// The message it answers and sends is the one the product's contract requires, field for field
// (toMessageDto, the frame's envelope with event_id, cursor, occurred_at, channel_id): the same
// bytes on the wire, so that the ratio measures the design and not the payload. With
// FLOOR_MESSAGE=narrow (mode `floor-narrow`) it carries only the 7 fields a bare message needs, as
// the first floor did (docs/performance.md, "The floor carries the contract's message").
//
// Run by scripts/bench/realtime.ts (modes `floor`, `floor-narrow`): DATABASE_URL, REDIS_URL,
// REDIS_PREFIX, PORT, FLOOR_MESSAGE.
import { createHash } from 'node:crypto'
import websocket from '@fastify/websocket'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import pg from 'pg'
import type { WebSocket } from 'ws'
import { uuidv7 } from '../../src/lib/ids.ts'
import { toMessageDto } from '../../src/schemas/message.ts'

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 })
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
const reader = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
const STREAM = `${process.env.REDIS_PREFIX ?? 'ams:floor:'}floor`
const NARROW = process.env.FLOOR_MESSAGE === 'narrow'
const PUBLIC_URL = 'http://127.0.0.1'

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex')

// Who is who, and who is in which channel: read once.
const agents = new Map<string, { id: string; name: string }>()
for (const r of (await pool.query<{ key_hash: string; id: string; name: string }>('SELECT k.key_hash, a.id, a.display_name AS name FROM api_keys k JOIN agents a ON a.id = k.agent_id')).rows) {
  agents.set(r.key_hash, { id: r.id, name: r.name })
}
const channelsOf = new Map<string, string[]>()
for (const r of (await pool.query<{ channel_id: string; member_id: string }>('SELECT channel_id, member_id FROM channel_members')).rows) {
  channelsOf.set(r.member_id, [...(channelsOf.get(r.member_id) ?? []), r.channel_id])
}
const sockets = new Map<string, Set<WebSocket>>()

const app = Fastify({ logger: false })
await app.register(websocket)
app.get('/health', async () => ({ status: 'ok' }))
app.get('/ws', { websocket: true }, (socket, req) => {
  const token = (req.query as { token?: string }).token ?? ''
  const agent = agents.get(sha256(token))
  if (!agent) return socket.close(4401)
  const channels = channelsOf.get(agent.id) ?? []
  for (const c of channels) {
    let set = sockets.get(c)
    if (!set) sockets.set(c, (set = new Set()))
    set.add(socket)
  }
  socket.on('close', () => channels.forEach((c) => sockets.get(c)?.delete(socket)))
  socket.send('{"type":"ready"}')
})

app.post(
  '/api/v1/channels/:id/messages',
  {
    schema: {
      params: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } }, required: ['id'] },
      body: { type: 'object', properties: { text: { type: 'string', minLength: 1, maxLength: 4000 } }, required: ['text'], additionalProperties: false },
    },
  },
  async (req, reply) => {
    const agent = agents.get(sha256((req.headers.authorization ?? '').slice(7)))
    if (!agent) return reply.code(401).send({ error: 'unauthorized', code: 'UNAUTHORIZED' })
    const channelId = (req.params as { id: string }).id
    const { text } = req.body as { text: string }
    const id = uuidv7()
    const createdAt = new Date()
    await pool.query({
      name: 'floor-insert',
      text: `INSERT INTO messages (id, channel_id, author_id, author_type, author_name, text, created_at) VALUES ($1, $2, $3, 'AGENT', $4, $5, $6)`,
      values: [id, channelId, agent.id, agent.name, text, createdAt],
    })
    const message = NARROW
      ? { id, channel_id: channelId, author_id: agent.id, author_type: 'AGENT', author_name: agent.name, text, created_at: createdAt.toISOString() }
      : toMessageDto({ id, channelId, authorId: agent.id, authorType: 'AGENT', authorName: agent.name, text, createdAt, editedAt: null, inReplyToEvent: null, chainDepth: 0 }, PUBLIC_URL)
    // The frame after its cursor (which the stream assigns): the reader puts the two together.
    const frame = NARROW
      ? JSON.stringify({ type: 'new_message', channel_id: channelId, message })
      : `","occurred_at":"${createdAt.toISOString()}","channel_id":"${channelId}","message":${JSON.stringify(message)}}`
    await redis.xadd(STREAM, 'MAXLEN', '~', '100000', '*', 'c', channelId, 'e', uuidv7(), 'f', frame)
    return reply.code(201).send(message)
  },
)

// One reader: every entry goes to the channel's sockets as the ready-made frame.
let last = '$'
let running = true
const readLoop = async (): Promise<void> => {
  while (running) {
    const batch = await reader.xread('COUNT', 1000, 'BLOCK', 1000, 'STREAMS', STREAM, last)
    for (const [, entries] of batch ?? []) {
      for (const [entryId, fields] of entries) {
        last = entryId
        const set = sockets.get(fields[1]!)
        if (!set) continue
        const frame = NARROW ? fields[5]! : `{"type":"new_message","event_id":"${fields[3]}","cursor":"${entryId}${fields[5]}`
        for (const ws of set) ws.send(frame)
      }
    }
  }
}
const reading = readLoop()

await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
process.once('SIGTERM', () => {
  running = false
  void Promise.all([app.close(), reading]).finally(async () => {
    await redis.del(STREAM).catch(() => 0)
    reader.disconnect()
    redis.disconnect()
    await pool.end()
    process.exit(0)
  })
})
