// Reads the event log for one member: membership is the member's current channels (read from
// the database for every call), plus events addressed to the member (removed from a channel,
// channel deleted). Scanning stops after MAX_SCAN entries so a member of few busy-log channels
// gets a short page with has_more rather than a slow request.
import type { FastifyInstance } from 'fastify'
import { AppError } from '../../lib/errors.ts'
import type { MemberPrincipal } from '../../plugins/auth.ts'
import { compareCursors, type Cursor } from '../../realtime/cursor.ts'
import { toEventFrame, type EventFrame } from '../../realtime/frames.ts'
import { visibleTo } from '../../realtime/hub.ts'
import type { LogEntry, LogInfo } from '../../realtime/broker.ts'
import { channelIdsOf } from '../channels/access.ts'
import type { EventPage } from './schemas.ts'

const SCAN_PAGE = 1_000
const MAX_SCAN = 10_000

const unavailable = (cause: unknown): AppError => new AppError('SERVICE_UNAVAILABLE', 'the event log is temporarily unavailable; retry later', { cause })

export async function readEventLog(app: FastifyInstance, member: MemberPrincipal, since: Cursor | undefined, limit: number): Promise<EventPage> {
  const { broker } = app.realtime
  const [info, channelIds] = await Promise.all([broker.info().catch((e: unknown) => Promise.reject(unavailable(e))) as Promise<LogInfo>, channelIdsOf(app, member.id)])
  if (since !== undefined && (compareCursors(since, info.floor) < 0 || compareCursors(since, info.newest) > 0)) {
    return { events: [], next_cursor: info.newest, has_more: false, resync_required: true }
  }
  const channels = new Set<string>(channelIds)
  const events: EventFrame[] = []
  let cursor = since ?? info.floor
  let scanned = 0
  scan: while (scanned < MAX_SCAN) {
    let page: LogEntry[]
    try {
      page = await broker.range(cursor, SCAN_PAGE)
    } catch (error) {
      throw unavailable(error)
    }
    for (const entry of page) {
      cursor = entry.cursor
      scanned += 1
      if (!visibleTo(member.id, channels, entry.event)) continue
      const frame = toEventFrame(entry)
      if (frame) events.push(frame)
      if (events.length >= limit) break scan
    }
    if (page.length < SCAN_PAGE) break
  }
  return { events, next_cursor: cursor, has_more: compareCursors(cursor, info.newest) < 0, resync_required: false }
}
