// Event cursors: "<milliseconds>-<sequence>", the format of Redis stream ids, so the Redis broker
// uses the stream id itself and the in-process broker produces the same shape. Cursors compare
// numerically part by part; a larger cursor is a later event in the log.

export type Cursor = string

export const CURSOR_PATTERN = '^[0-9]{1,16}-[0-9]{1,16}$'

/**
 * What a client may send as `since`: a cursor, a bare millisecond count N meaning `N-0` (so
 * `since=0` asks for everything and gets resync_required when the log no longer reaches back), or
 * `now`: the newest cursor of the log when the request is read (only what happens next).
 */
export const SINCE_PATTERN = '^(now|[0-9]{1,16}(-[0-9]{1,16})?)$'

/** `since=now`: start at the log's newest cursor. */
export const SINCE_NOW = 'now'

/** The cursor of a `since` value that matched SINCE_PATTERN, other than `now` (see resolveSince). */
export const sinceCursor = (since: string): Cursor => (since.includes('-') ? since : `${since}-0`)

/**
 * The cursor a `since` value stands for: `now` is the log's newest cursor (read only then), absent
 * stays absent (each reader has its own default).
 */
export async function resolveSince(since: string | undefined, newest: () => Promise<Cursor>): Promise<Cursor | undefined> {
  if (since === undefined) return undefined
  return since === SINCE_NOW ? newest() : sinceCursor(since)
}

/** The cursor before every event: reading after it reads the whole log. */
export const ORIGIN: Cursor = '0-0'

function parts(cursor: Cursor): [number, number] {
  const dash = cursor.indexOf('-')
  return [Number(cursor.slice(0, dash)), Number(cursor.slice(dash + 1))]
}

/** Negative when a < b, 0 when equal, positive when a > b. */
export function compareCursors(a: Cursor, b: Cursor): number {
  if (a === b) return 0
  const [am, as] = parts(a)
  const [bm, bs] = parts(b)
  return am !== bm ? am - bm : as - bs
}

export const maxCursor = (a: Cursor, b: Cursor): Cursor => (compareCursors(a, b) >= 0 ? a : b)

/** Monotonic cursors for the in-process broker: wall-clock milliseconds, then a sequence. */
export class CursorClock {
  private ms = Date.now()
  private seq = 0
  /** Below every cursor this clock produces: the start of this process's log. */
  readonly origin: Cursor = `${this.ms}-0`

  next(): Cursor {
    const now = Date.now()
    if (now > this.ms) {
      this.ms = now
      this.seq = 0
    } else {
      this.seq += 1
    }
    return `${this.ms}-${this.seq}`
  }
}
