// Search (GET /api/v1/search) on PostgreSQL's full-text index, and the channels a search or a
// mentions list covers. The engine seam is ./search-engine.ts; the hits are read with the message
// read model (./read-model.ts) plus their rank and snippet.
import type { ServiceContext } from '../context.ts'
import { MESSAGE_COLUMNS, MESSAGE_JOIN, type MessageRow } from './read-model.ts'
import type { SearchEngine } from './search-engine.ts'

export interface SearchRow extends MessageRow {
  rank: number
  snippet: string
}

// Search ranks the newest matches only (docs/decisions.md, "Search: relevance among the newest
// matches"). Ranking every match made a word found in 1 % of a million messages cost a second of
// PostgreSQL per query (docs/performance.md, "Search at a million messages"). One statement finds
// the newest matches in four parts, read in order until RANKED_MATCHES are found:
//  1-2. The last 2 hours, then the rest of the day, read row by row from the primary key range
//     (ids are UUIDv7: time-ordered): a few thousand rows at most, and a common word stops here.
//  3. The rest of the week: the GIN index ANDed with the primary key range.
//  4. Everything older, for a word rare enough to leave the week short: the GIN index alone
//     gives the candidates (the bound is applied after it, so the planner does not build a bitmap
//     of a year of primary keys for ten matches).
// Each part is fenced (OFFSET 0): given ORDER BY id DESC LIMIT, the planner bets on a backward
// scan of the primary key, which reads the whole table when it overestimates the matches (a
// phrase: 3.4 s at a million messages). The parts are the branches of a UNION ALL under a LIMIT:
// PostgreSQL runs the branches of an Append in order and stops pulling once the LIMIT is met, so
// a later part costs nothing when an earlier one was enough. A part that runs decodes the posting
// lists of the query's words again: two of them at most.

/** How many of the newest matches are ranked; results are the best `limit` of them. */
export const RANKED_MATCHES = 200
const RECENT_SLICES_MS = [2 * 3_600_000, 86_400_000, 7 * 86_400_000]

/** The smallest UUIDv7 of a millisecond: the lower bound of the ids posted from then on. */
function firstIdAt(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`
}

/** The channels a search covers: the caller's channels and DMs, and every regular channel for the owner. */
export async function searchScope(ctx: ServiceContext, memberId: string, allRegularChannels: boolean): Promise<string[]> {
  const { rows } = await ctx.db.pool.query<{ id: string }>(
    `SELECT channel_id AS id FROM channel_members WHERE member_id = $1
     UNION SELECT id FROM channels WHERE $2::boolean AND type = 'channel'`,
    [memberId, allRegularChannels],
  )
  return rows.map((r) => r.id)
}

// A part of the search: its matches, newest first. `match` is how the text is matched: `@@`, which
// the GIN index serves, or its function ts_match_vq, which no index serves, for the small recent
// slices that are cheaper to read row by row than to decode a common word's whole posting list.
const part = (match: '@@' | 'ts_match_vq', bounds: string, after = '') => {
  const matches = match === '@@' ? "m.search @@ websearch_to_tsquery('english', $1)" : "ts_match_vq(m.search, websearch_to_tsquery('english', $1))"
  return `(
      SELECT id, rank FROM (
        SELECT m.id, ts_rank(m.search, websearch_to_tsquery('english', $1))::float8 AS rank FROM messages m
         WHERE ${matches} AND m.channel_id = ANY($2::uuid[])${bounds}
        OFFSET 0) s${after}
       ORDER BY id DESC)`
}

// $1 the query text, $2 the scope, $3-$5 the lower bounds of the slices, $6 RANKED_MATCHES,
// $7 the page size. The hits are the read model's rows (./read-model.ts) with their rank and a
// snippet built from HTML-escaped text (the only markup in it is our <mark> tags). A text of at most SNIPPET_WORDS words is its own
// snippet, whole: ts_headline's fragments cut emoji and the last word off short texts
// ("🎉 deploy done 🚀" gave "deploy done"); a longer one is cut into fragments around the matches.
const SNIPPET_WORDS = 30
const SEARCH_SQL = `
  WITH newest AS (
    SELECT id, rank FROM (
      ${part('ts_match_vq', ' AND m.id >= $3::uuid')}
      UNION ALL ${part('ts_match_vq', ' AND m.id >= $4::uuid AND m.id < $3::uuid')}
      UNION ALL ${part('@@', ' AND m.id >= $5::uuid AND m.id < $4::uuid')}
      UNION ALL ${part('@@', '', ' WHERE id < $5::uuid')}
    ) matches
    LIMIT $6)
  SELECT ${MESSAGE_COLUMNS},
         n.rank,
         ts_headline('english',
           replace(replace(replace(m.text, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'),
           websearch_to_tsquery('english', $1),
           CASE WHEN cardinality(regexp_split_to_array(btrim(m.text), '\\s+')) <= ${SNIPPET_WORDS}
                THEN 'StartSel=<mark>, StopSel=</mark>, HighlightAll=true'
                ELSE 'StartSel=<mark>, StopSel=</mark>, MaxWords=${SNIPPET_WORDS}, MinWords=10, MaxFragments=2, FragmentDelimiter=" … "' END) AS snippet
    FROM newest n
    JOIN messages m ON m.id = n.id
    ${MESSAGE_JOIN}
   ORDER BY n.rank DESC, m.id DESC
   LIMIT $7`

/**
 * PostgreSQL's full-text search over the generated `search` column (GIN index): the best `limit`
 * of the newest RANKED_MATCHES matches in the given channels by `ts_rank`, newest first among
 * equals.
 */
export const postgresSearch: SearchEngine = {
  async search(ctx, request) {
    const { rows } = await ctx.db.pool.query<SearchRow>(searchStatement(request.text, request.channelIds, request.limit))
    return rows
  },
}

/** The search statement and its values (also used by scripts/bench/history.ts to show its plans). */
export function searchStatement(text: string, scope: string[], limit: number, now = Date.now()): { text: string; values: unknown[] } {
  const bounds = RECENT_SLICES_MS.map((span) => firstIdAt(now - span))
  return { text: SEARCH_SQL, values: [text, scope, ...bounds, RANKED_MATCHES, limit] }
}
