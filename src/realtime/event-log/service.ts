// Reads the event log for one member: membership is the member's current channels (read from
// the database for every call), plus events addressed to the member (removed from a channel,
// channel deleted). Scanning stops after MAX_SCAN entries so a member of few busy-log channels
// gets a short page with has_more rather than a slow request.
import type { FastifyInstance } from 'fastify'
import { filteredOut, NO_FILTER, type EventFilter } from '../../events/filter.ts'
import { AppError, unauthorized } from '../../lib/errors.ts'
import type { MemberPrincipal } from '../../modules/identity/principal.ts'
import { compareCursors, type Cursor } from '../cursor.ts'
import { toEventFrame, type EventFrame } from '../frames.ts'
import { visibleTo } from '../hub.ts'
import type { LogEntry, LogInfo } from '../broker.ts'
import type { HeldCredential } from '../../modules/identity/held.ts'
import { liveChannelsOf } from '../../modules/channels/access.ts'
import type { EventPage } from './schemas.ts'

const SCAN_PAGE = 1_000
const MAX_SCAN = 10_000

const unavailable = (cause: unknown): AppError => new AppError('SERVICE_UNAVAILABLE', 'the event log is temporarily unavailable; retry later', { cause })

export async function readEventLog(app: FastifyInstance, member: MemberPrincipal, since: Cursor | undefined, limit: number, filter: EventFilter = NO_FILTER): Promise<EventPage> {
  const { broker } = app.realtime
  const [info, live] = await Promise.all([broker.info().catch((e: unknown): Promise<LogInfo> => Promise.reject(unavailable(e))), liveChannelsOf(app.ctx, member.id)])
  if (since !== undefined && (compareCursors(since, info.floor) < 0 || compareCursors(since, info.newest) > 0)) {
    return { events: [], next_cursor: info.newest, has_more: false, resync_required: true }
  }
  const channels = new Set<string>(live.channelIds)
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
      if (!visibleTo(member.id, channels, entry.event) || filteredOut(filter, member.id, entry.event)) continue
      const frame = toEventFrame(entry)
      if (frame) events.push(frame)
      if (events.length >= limit) break scan
    }
    if (page.length < SCAN_PAGE) break
  }
  return { events, next_cursor: cursor, has_more: compareCursors(cursor, info.newest) < 0, resync_required: false }
}

/** Nothing to answer yet: no event, nothing more to read, no resync to report. */
const quiet = (page: EventPage): boolean => !page.events.length && !page.has_more && !page.resync_required

/**
 * Long polling (GET /api/v1/events?wait=): reads the log like `readEventLog`; when there is
 * nothing for the member yet, parks the request as a hub subscriber (the same delivery as the
 * WebSocket, membership checked at delivery) until an event the member may see arrives, then
 * reads again. The subscriber is registered before the second read, so an event appended between
 * that read and the wait still wakes it. At the deadline, when the client leaves or the server
 * shuts down, the answer is the last (empty) page read.
 */
export async function waitForEvents(
  app: FastifyInstance,
  credential: HeldCredential,
  since: Cursor | undefined,
  limit: number,
  waitMs: number,
  signal: AbortSignal,
  filter: EventFilter = NO_FILTER,
): Promise<EventPage> {
  const member = credential.principal
  const deadline = Date.now() + waitMs
  let page = await readEventLog(app, member, since, limit, filter)
  if (!quiet(page) || waitMs <= 0) return page
  // The parked subscriber carries the filter: only an event that passes it wakes the request.
  const poll = await app.eventStreams.park(credential, filter)
  try {
    page = await readEventLog(app, member, page.next_cursor, limit, filter)
    if (!quiet(page)) return page
    poll.live(page.next_cursor)
    for (;;) {
      const outcome = await poll.until(page.next_cursor, deadline - Date.now(), signal)
      if (outcome === 'revoked') throw unauthorized('the credential was revoked or has expired')
      if (outcome !== 'event') return page
      // Woken by the hub; the log reader decides what the page holds (membership may have
      // changed in between: then nothing is shown and the wait goes on).
      page = await readEventLog(app, member, page.next_cursor, limit, filter)
      if (!quiet(page)) return page
    }
  } finally {
    app.eventStreams.release(poll)
  }
}
