// The shapes of ids and other values the contract fixes, matched exactly.

/** A UUIDv7 (every id the service mints: src/lib/ids.ts), lower case. */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
/** A timestamp as the API writes it: ISO 8601, UTC, milliseconds. */
export const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
/** An event cursor (`<ms>-<seq>`). */
export const CURSOR_RE = /^\d+-\d+$/
/** A well-formed UUIDv7 that names nothing. */
export const MISSING = '01890000-0000-7000-8000-000000000000'
