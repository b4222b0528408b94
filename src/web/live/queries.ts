// The event log over REST (GET /api/v1/events): its newest cursor, read when a page starts, and
// what happened after a cursor, read when the socket's first connection checks what it missed.
import { api, unwrap } from '../api/client.ts'

/** The log's newest cursor: where the first connection checks from. */
export const fetchLogHead = async () => (await unwrap(api.GET('/api/v1/events', { params: { query: { since: 'now' } } }))).next_cursor

/** The events after `since`, at most `limit`. */
export const fetchEventsSince = (since: string, limit: number) => unwrap(api.GET('/api/v1/events', { params: { query: { since, limit } } }))
