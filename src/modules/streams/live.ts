// What an instance keeps of the streams it serves (docs/decisions.md, "Streaming messages: the
// text in memory, the row once a second"): the live texts (./texts.ts: this process alone, or
// Redis in a cluster), the streams it appended to since its last flush, the delta coalescer and
// the append limit. The flush writes every stream it touched in one statement, at most once a
// second, and at shutdown; a reader of history gets the live text of a streaming message
// (`withLiveText`), so the row's lag is never seen.
import type { ServiceContext } from '../context.ts'
import type { MessageDto } from '../../schemas/message.ts'
import { DeltaCoalescer, WindowLimit, type Delta } from './deltas.ts'
import * as repo from './repo.ts'
import { APPENDS_PER_SECOND, DELTA_FRAME_GAP_MS, STREAM_FLUSH_MS } from './schemas.ts'
import { MemoryTexts, RedisTexts, type StreamTexts } from './texts.ts'

export interface Live {
  texts: StreamTexts
  /** Streams appended to here since the last flush. */
  dirty: Set<string>
  deltas: DeltaCoalescer
  appends: WindowLimit
  flushing: Promise<void> | null
  timer: NodeJS.Timeout | null
}

// Keyed by the app's database handle (ctx.db), which lives as long as the app.
const live = new WeakMap<object, Live>()

/** This instance's live state (one per app). */
export function liveOf(ctx: ServiceContext): Live {
  let state = live.get(ctx.db)
  if (!state) {
    // Kept well past the idle sweep's limit: the sweep ends an idle stream with its live text.
    const ttlMs = ctx.config.streamIdleSeconds * 1000 + 10 * 60_000
    state = {
      texts: ctx.redis ? new RedisTexts(ctx.redis, ctx.redisPrefix, ttlMs) : new MemoryTexts(),
      dirty: new Set(),
      deltas: new DeltaCoalescer((d) => publishDelta(ctx, d), DELTA_FRAME_GAP_MS),
      appends: new WindowLimit(APPENDS_PER_SECOND),
      flushing: null,
      timer: null,
    }
    live.set(ctx.db, state)
  }
  return state
}

function publishDelta(ctx: ServiceContext, d: Delta): void {
  ctx.signals.publish({
    channelIds: [d.channelId],
    except: d.authorId ?? null,
    sse: true,
    frame: { type: 'message_delta', channel_id: d.channelId, message_id: d.messageId, thread_id: d.threadId, seq: d.seq, offset: d.offset, text: d.text },
  })
}

/** Marks a stream appended to; the next flush (within STREAM_FLUSH_MS) writes its row. */
export function touched(ctx: ServiceContext, messageId: string): void {
  const state = liveOf(ctx)
  state.dirty.add(messageId)
  if (!state.timer) {
    state.timer = setTimeout(() => {
      state.timer = null
      void flushTexts(ctx).catch((err: unknown) => ctx.log.warn({ err }, 'could not write the text of streaming messages (the next flush tries again)'))
    }, STREAM_FLUSH_MS)
    state.timer.unref()
  }
}

/**
 * Writes the text so far of the streams appended to here (all, or those given) to their rows, in
 * one statement; forgets those no longer streaming. One flush at a time: a second call waits for
 * the running one, then flushes what is left.
 */
export async function flushTexts(ctx: ServiceContext, only?: string[]): Promise<void> {
  const state = liveOf(ctx)
  while (state.flushing) await state.flushing
  const ids = only ?? [...state.dirty]
  for (const id of ids) state.dirty.delete(id)
  if (!ids.length) return
  const run = (async () => {
    try {
      const current = await state.texts.read(ids)
      const rows = [...current].map(([messageId, s]) => ({ messageId, text: s.text, seq: s.seq, length: s.length, lastAppendAt: new Date(s.lastAppendAt) }))
      // One order for every flush, so two instances' flushes lock the rows alike.
      rows.sort((a, b) => (a.messageId < b.messageId ? -1 : 1))
      const gone = await repo.flushStreams(ctx.db.pool, rows)
      await state.texts.forget(gone)
    } catch (error) {
      // Written next time (an outage of the database or of Redis).
      for (const id of ids) touched(ctx, id)
      throw error
    }
  })()
  state.flushing = run
  try {
    await run
  } finally {
    state.flushing = null
  }
}

/** At shutdown: the waiting deltas go out and the texts are written. */
export async function closeLive(ctx: ServiceContext): Promise<void> {
  const state = live.get(ctx.db)
  if (!state) return
  if (state.timer) clearTimeout(state.timer)
  state.timer = null
  state.deltas.flushAll()
  await flushTexts(ctx).catch((err: unknown) => ctx.log.warn({ err }, 'could not write the text of streaming messages at shutdown'))
}

/** The author left the channel: its streams there are written and dropped from the store (an append then answers why not). */
export async function leftChannel(ctx: ServiceContext, channelId: string, authorId: string): Promise<void> {
  const ids = await repo.streamsOf(ctx.db.pool, channelId, authorId)
  if (!ids.length) return
  await flushTexts(ctx, ids)
  await liveOf(ctx).texts.forget(ids)
}

/** Messages as a reader sees them: a streaming one with its live text (the row lags up to a flush). */
export async function withLiveText<T extends MessageDto>(ctx: ServiceContext, messages: T[]): Promise<T[]> {
  const streaming = messages.filter((m) => m.stream_state === 'streaming').map((m) => m.id)
  if (!streaming.length) return messages
  const current = await liveOf(ctx).texts.read(streaming)
  if (!current.size) return messages
  return messages.map((m) => {
    const s = current.get(m.id)
    return s ? { ...m, text: s.text } : m
  })
}
