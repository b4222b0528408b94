// Search ranks the newest 200 matches (docs/decisions.md, "Search: relevance among the newest
// matches"), found in slices back in time (the last 2 hours, the day, the week, then everything
// older). Messages of other ages are written straight into the table with ids of their time
// (UUIDv7), as history imported or posted long ago would be.
import { randomBytes } from 'node:crypto'
import t from 'tap'
import { setup, type Ctx } from './fixtures/support.ts'
import { bearer, createChannel, post } from '../support/index.ts'

const HOUR = 3_600_000
const DAY = 24 * HOUR

/** A UUIDv7 of the given millisecond. */
function idAt(ms: number): string {
  const hex = ms.toString(16).padStart(12, '0') + randomBytes(10).toString('hex')
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

async function writeAt(c: Ctx, channelId: string, agent: { id: string; name: string }, ages: number[], text: string): Promise<string[]> {
  const now = Date.now()
  const rows = ages.map((age) => ({ id: idAt(now - age), channelId, authorId: agent.id, authorType: 'AGENT' as const, authorName: agent.name, text, createdAt: new Date(now - age) }))
  await c.app.db.prisma.message.createMany({ data: rows })
  return rows.map((r) => r.id)
}

const search = async (c: Ctx, query: string): Promise<string[]> => {
  const res = await c.api({ method: 'GET', url: `/api/v1/messages/search?${query}`, headers: bearer(c.tok.a1) })
  if (res.statusCode !== 200) throw new Error(`search: ${res.statusCode} ${res.body}`)
  return res.json().results.map((h: { id: string }) => h.id)
}

t.test('matches of every age are found once each, newest first among equal ranks', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'archive')
  const agent = c.ws.agents[0]!
  const live = await post(c.api, c.tok.a1, ch.id, 'archive rotation tonight')
  // Either side of each slice bound: 2 hours, a day, a week.
  const ages = [30 * 60_000, 2 * HOUR - 60_000, 2 * HOUR + 60_000, DAY - 60_000, DAY + 60_000, 7 * DAY - 60_000, 7 * DAY + 60_000, 400 * DAY]
  const old = await writeAt(c, ch.id, agent, ages, 'archive rotation tonight')
  t.same(await search(c, 'q=rotation&limit=100'), [live.id, ...old])
  t.same(await search(c, `q=rotation&channel_id=${ch.id}&limit=3`), [live.id, ...old.slice(0, 2)])
  t.same(await search(c, 'q=%22rotation+tonight%22&limit=100'), [live.id, ...old], 'phrases too')
})

t.test('only the newest 200 matches are ranked; fewer are ranked whole', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'busy')
  const agent = c.ws.agents[0]!
  // Five strong matches ten days old, then 200 weak ones in the last hours.
  const strong = await writeAt(c, ch.id, agent, [10 * DAY, 10 * DAY + 1, 10 * DAY + 2, 10 * DAY + 3, 10 * DAY + 4], 'quota quota quota quota exceeded')
  const weak = await writeAt(
    c,
    ch.id,
    agent,
    Array.from({ length: 200 }, (_, i) => HOUR + i * 60_000),
    'the quota report is ready for review by the team this afternoon',
  )
  const hits = await search(c, 'q=quota&limit=100')
  t.equal(hits.length, 100)
  t.same(
    hits.filter((id) => strong.includes(id)),
    [],
    'older than the newest 200 matches: not ranked',
  )
  t.same(hits, weak.slice(0, 100), 'equal ranks: newest first')
  t.same(await search(c, 'q=quota+exceeded&limit=5'), strong, 'five matches: ranked whole')
  const best = await search(c, 'q=quota+OR+exceeded&limit=1')
  t.same(best, [weak[0]], 'the strong matches stay outside the newest 200 for an OR as well')
})
