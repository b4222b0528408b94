// Catch-up after a cursor: the retained entries of the log after `since`, page by page, as the
// client frames the member may see now and its filter lets through (the hub's rules, as for live
// delivery). Used by event
// streams (src/realtime/sse.ts); the gateway's replay follows the same steps and can move here.
import type { Broker } from './broker.ts'
import type { Cursor } from './cursor.ts'
import { toEventFrame, type EventFrame } from './frames.ts'
import type { Client, Hub } from './hub.ts'

const PAGE = 1_000

/**
 * Hands each visible frame after `since` to `deliver`, oldest first; `deliver` answers false to
 * stop (the client went away). Returns the position reached (invisible entries included) and how
 * many frames were delivered.
 */
export async function replayVisible(broker: Broker, hub: Hub, client: Client, since: Cursor, deliver: (frame: EventFrame) => Promise<boolean>): Promise<{ cursor: Cursor; replayed: number }> {
  let cursor = since
  let replayed = 0
  for (;;) {
    const page = await broker.range(cursor, PAGE)
    for (const entry of page) {
      cursor = entry.cursor
      const frame = hub.wants(client, entry.event) ? toEventFrame(entry) : null
      if (!frame) continue
      if (!(await deliver(frame))) return { cursor, replayed }
      replayed += 1
    }
    if (page.length < PAGE) return { cursor, replayed }
  }
}
