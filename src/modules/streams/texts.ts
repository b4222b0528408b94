// The text of a streaming message while it streams (docs/decisions.md, "Streaming messages: the
// text in memory, the row once a second"). An append changes this store only; the message row is
// written by the flush at most once a second (./live.ts), and by the stream's end. Two stores, one
// contract: in this process when the server runs alone, in Redis when it runs as a cluster (any
// instance may take the next append of a stream: Redis orders them, as the row lock did).
//
// The store holds what it was told: a stream it does not know (started before this process, or
// its Redis keys expired) answers `miss`, and the caller loads it from PostgreSQL (`open`) and tries
// again. An entry ends with the stream: `end` marks it (appends then answer `ended`) and answers
// the text, `reopen` takes the mark back when the end failed, `forget` removes it.
import type { Redis } from 'ioredis'

export interface LiveStream {
  channelId: string
  authorId: string
  threadId: string | null
  text: string
  seq: number
  /** UTF-16 code units (JavaScript's length): where the next append starts. */
  length: number
  /** Characters (code points), what MAX_MESSAGE_LENGTH counts. */
  chars: number
  lastAppendAt: number
}

export interface Append {
  authorId: string
  channelId: string
  text: string
  length: number
  chars: number
  maxChars: number
  count: number
  at: number
}

export type AppendOutcome = { ok: true; seq: number; length: number; threadId: string | null } | { ok: false; why: 'miss' | 'not_author' | 'other_channel' | 'ended' | 'too_long' }

export interface StreamTexts {
  /** Registers a stream unless it is known already (a concurrent load of the same one is harmless). */
  open(messageId: string, s: LiveStream): Promise<void>
  append(messageId: string, a: Append): Promise<AppendOutcome>
  /** The streams' current state (absent: unknown here). */
  read(messageIds: string[]): Promise<Map<string, LiveStream>>
  /** Marks it ended (further appends answer `ended`) and answers its state; null when unknown. */
  end(messageId: string): Promise<LiveStream | null>
  /** Takes an end's mark back (the end failed: the stream goes on). */
  reopen(messageId: string): Promise<void>
  forget(messageIds: string[]): Promise<void>
}

/** Checks an append against a stream's state: the outcome, and the state after it. */
function admit(s: LiveStream & { ended: boolean }, a: Append): AppendOutcome {
  if (s.authorId !== a.authorId) return { ok: false, why: 'not_author' }
  if (s.channelId !== a.channelId) return { ok: false, why: 'other_channel' }
  if (s.ended) return { ok: false, why: 'ended' }
  if (s.chars + a.chars > a.maxChars) return { ok: false, why: 'too_long' }
  s.text += a.text
  s.seq += a.count
  s.length += a.length
  s.chars += a.chars
  s.lastAppendAt = a.at
  return { ok: true, seq: s.seq, length: s.length, threadId: s.threadId }
}

export class MemoryTexts implements StreamTexts {
  private readonly streams = new Map<string, LiveStream & { ended: boolean }>()

  async open(messageId: string, s: LiveStream): Promise<void> {
    if (!this.streams.has(messageId)) this.streams.set(messageId, { ...s, ended: false })
  }

  async append(messageId: string, a: Append): Promise<AppendOutcome> {
    const s = this.streams.get(messageId)
    return s ? admit(s, a) : { ok: false, why: 'miss' }
  }

  async read(messageIds: string[]): Promise<Map<string, LiveStream>> {
    const found = new Map<string, LiveStream>()
    for (const id of messageIds) {
      const s = this.streams.get(id)
      if (s) found.set(id, { ...s })
    }
    return found
  }

  async end(messageId: string): Promise<LiveStream | null> {
    const s = this.streams.get(messageId)
    if (!s) return null
    s.ended = true
    return { ...s }
  }

  async reopen(messageId: string): Promise<void> {
    const s = this.streams.get(messageId)
    if (s) s.ended = false
  }

  async forget(messageIds: string[]): Promise<void> {
    for (const id of messageIds) this.streams.delete(id)
  }
}

// Redis: a hash of the bookkeeping and a string of the text per stream, both kept for
// `ttlMs` after the last change (longer than the idle sweep's limit: an expired entry is one the
// sweep has ended from the row, which holds the text as of the last flush).
const OPEN = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'author', ARGV[1], 'channel', ARGV[2], 'thread', ARGV[3], 'seq', ARGV[4], 'len', ARGV[5], 'chars', ARGV[6], 'at', ARGV[7], 'ended', '0')
redis.call('SET', KEYS[2], ARGV[8])
redis.call('PEXPIRE', KEYS[1], ARGV[9])
redis.call('PEXPIRE', KEYS[2], ARGV[9])
return 1`

const APPEND = `
local v = redis.call('HMGET', KEYS[1], 'author', 'channel', 'ended', 'chars', 'seq', 'len', 'thread')
if not v[1] then return {'miss'} end
if v[1] ~= ARGV[1] then return {'not_author'} end
if v[2] ~= ARGV[2] then return {'other_channel'} end
if v[3] ~= '0' then return {'ended'} end
local chars = tonumber(v[4]) + tonumber(ARGV[4])
if chars > tonumber(ARGV[5]) then return {'too_long'} end
local seq = tonumber(v[5]) + tonumber(ARGV[6])
local len = tonumber(v[6]) + tonumber(ARGV[7])
redis.call('APPEND', KEYS[2], ARGV[3])
redis.call('HSET', KEYS[1], 'chars', chars, 'seq', seq, 'len', len, 'at', ARGV[8])
redis.call('PEXPIRE', KEYS[1], ARGV[9])
redis.call('PEXPIRE', KEYS[2], ARGV[9])
return {'ok', seq, len, v[7]}`

const END = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'ended', ARGV[1])
return 1`

type Fields = [author: string | null, channel: string | null, thread: string | null, seq: string | null, len: string | null, chars: string | null, at: string | null]
const FIELDS = ['author', 'channel', 'thread', 'seq', 'len', 'chars', 'at'] as const

type Script = (...args: (string | number)[]) => Promise<unknown>
type Scripted = Redis & { amsStreamOpen: Script; amsStreamAppend: Script; amsStreamEnd: Script }

export class RedisTexts implements StreamTexts {
  private readonly redis: Scripted

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly ttlMs: number,
  ) {
    // Sent once, then called by their SHA (ioredis loads a script again when Redis lost it).
    if (!('amsStreamAppend' in redis)) {
      redis.defineCommand('amsStreamOpen', { numberOfKeys: 2, lua: OPEN })
      redis.defineCommand('amsStreamAppend', { numberOfKeys: 2, lua: APPEND })
      redis.defineCommand('amsStreamEnd', { numberOfKeys: 1, lua: END })
    }
    this.redis = redis as Scripted
  }

  // One hash tag per stream: its two keys live on one node of a Redis Cluster.
  private keys(messageId: string): [string, string] {
    return [`${this.prefix}stream:{${messageId}}`, `${this.prefix}stream:{${messageId}}:text`]
  }

  async open(messageId: string, s: LiveStream): Promise<void> {
    await this.redis.amsStreamOpen(...this.keys(messageId), s.authorId, s.channelId, s.threadId ?? '', s.seq, s.length, s.chars, s.lastAppendAt, s.text, this.ttlMs)
  }

  async append(messageId: string, a: Append): Promise<AppendOutcome> {
    const r = (await this.redis.amsStreamAppend(...this.keys(messageId), a.authorId, a.channelId, a.text, a.chars, a.maxChars, a.count, a.length, a.at, this.ttlMs)) as [
      string,
      number?,
      number?,
      string?,
    ]
    if (r[0] !== 'ok') return { ok: false, why: r[0] as Exclude<AppendOutcome, { ok: true }>['why'] }
    return { ok: true, seq: r[1]!, length: r[2]!, threadId: r[3] || null }
  }

  async read(messageIds: string[]): Promise<Map<string, LiveStream>> {
    const found = new Map<string, LiveStream>()
    if (!messageIds.length) return found
    const pipeline = this.redis.pipeline()
    for (const id of messageIds) {
      const [hash, text] = this.keys(id)
      pipeline.hmget(hash, ...FIELDS)
      pipeline.get(text)
    }
    const replies = (await pipeline.exec()) ?? []
    messageIds.forEach((id, i) => {
      const [hashError, fields] = replies[2 * i] ?? []
      const [textError, text] = replies[2 * i + 1] ?? []
      if (hashError) throw hashError
      if (textError) throw textError
      const [author, channel, thread, seq, len, chars, at] = fields as Fields
      if (!author || typeof text !== 'string') return
      found.set(id, { authorId: author, channelId: channel!, threadId: thread || null, text, seq: Number(seq), length: Number(len), chars: Number(chars), lastAppendAt: Number(at) })
    })
    return found
  }

  async end(messageId: string): Promise<LiveStream | null> {
    const [hash] = this.keys(messageId)
    if (!(await this.redis.amsStreamEnd(hash, '1'))) return null
    return (await this.read([messageId])).get(messageId) ?? null
  }

  async reopen(messageId: string): Promise<void> {
    await this.redis.amsStreamEnd(this.keys(messageId)[0], '0')
  }

  async forget(messageIds: string[]): Promise<void> {
    if (messageIds.length) await this.redis.del(...messageIds.flatMap((id) => this.keys(id)))
  }
}
