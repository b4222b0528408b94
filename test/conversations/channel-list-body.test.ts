// GET /api/v1/channels answers the JSON text PostgreSQL builds (src/modules/channels/repo.ts,
// sidebarJson), sent as it is. These tests hold it to what the server wrote before, objects
// mapped field by field and JSON.stringify: the same bytes, for a member, the workspace owner, a
// DM, a channel never read, one without messages and text that JSON must escape.
import t from 'tap'
import { uuidv7Time } from '../../src/lib/ids.ts'
import { setup } from './fixtures/support.ts'
import { addMember, bearer, createChannel, post } from '../support/index.ts'

// Every character JSON.stringify escapes (quote, backslash, the control characters, short and
// \u00xx forms) and some it leaves as they are (DEL, non-ASCII, U+2028, an astral emoji).
const TRICKY = 'say "hi" \\ back\b\f\n\r\t\u0001\u001f\u007f / é ✓ \u2028 😀 </script>'

const at = (messageId: string): string => uuidv7Time(messageId).toISOString()

interface Item {
  id: string
  name: string
  type: 'channel' | 'dm'
  description: string
  private: boolean
  unread_count: number
  last_read_message_id: string | null
  is_member: boolean
  last_message_at: string | null
}

t.test('the list is byte for byte what JSON.stringify wrote of the mapped items', async (t) => {
  const c = await setup(t)
  const a1 = c.ws.agents[0]!
  // Oldest first: created in this order.
  const alpha = await createChannel(c.api, c.tok.a1, 'alpha', { description: TRICKY })
  const quiet = await createChannel(c.api, c.tok.a1, 'quiet', { description: '' })
  const never = await createChannel(c.api, c.tok.a2, 'never read', { members: [a1.id] })
  const secret = (await c.api({ method: 'POST', url: '/api/v1/channels', headers: bearer(c.tok.a1), payload: { name: 'secret', private: true } })).json()
  const dm = (await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: c.ws.member.id } })).json()
  const others = await createChannel(c.api, c.tok.a2, 'not mine')
  await c.app.db.prisma.user.update({ where: { id: c.ws.member.id }, data: { displayName: TRICKY } })

  await addMember(c.api, c.tok.a1, alpha.id, c.ws.agents[1]!.id)
  const first = await post(c.api, c.tok.a2, alpha.id, 'one')
  await post(c.api, c.tok.a1, alpha.id, 'mine: not unread')
  await post(c.api, c.tok.a2, alpha.id, 'two')
  const last = await post(c.api, c.tok.a2, alpha.id, 'three')
  const read = await c.api({ method: 'PUT', url: `/api/v1/channels/${alpha.id}/read`, headers: bearer(c.tok.a1), payload: { message_id: first.id } })
  t.equal(read.statusCode, 200)
  const neverLast = await post(c.api, c.tok.a2, never.id, 'you have not read me')
  const dmLast = await post(c.api, c.tok.member, dm.id, 'psst')
  const othersLast = await post(c.api, c.tok.a2, others.id, 'elsewhere')

  const mine: Item[] = [
    { id: alpha.id, name: 'alpha', type: 'channel', description: TRICKY, private: false, unread_count: 2, last_read_message_id: first.id, is_member: true, last_message_at: at(last.id) },
    { id: quiet.id, name: 'quiet', type: 'channel', description: '', private: false, unread_count: 0, last_read_message_id: null, is_member: true, last_message_at: null },
    {
      id: never.id,
      name: 'never read',
      type: 'channel',
      description: 'never read channel',
      private: false,
      unread_count: 1,
      last_read_message_id: null,
      is_member: true,
      last_message_at: at(neverLast.id),
    },
    { id: secret.id, name: 'secret', type: 'channel', description: '', private: true, unread_count: 0, last_read_message_id: null, is_member: true, last_message_at: null },
    { id: dm.id, name: TRICKY, type: 'dm', description: '', private: true, unread_count: 1, last_read_message_id: null, is_member: true, last_message_at: at(dmLast.id) },
  ]
  const res = await c.api({ method: 'GET', url: '/api/v1/channels', headers: bearer(c.tok.a1) })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.body, JSON.stringify(mine), 'a member: its channels, the private one and the DM named after the person')

  // The person's side of the DM: named after the agent; its own message is not unread.
  const member = await c.api({ method: 'GET', url: '/api/v1/channels', headers: bearer(c.tok.member) })
  t.equal(
    member.body,
    JSON.stringify([{ id: dm.id, name: 'agent-1', type: 'dm', description: '', private: true, unread_count: 0, last_read_message_id: null, is_member: true, last_message_at: at(dmLast.id) }]),
  )

  // The owner: every regular channel, the private one too (not the DM, which it is not in), none joined.
  const notJoined = (id: string, name: string, description: string, lastMessageAt: string | null, isPrivate = false): Item => ({
    id,
    name,
    type: 'channel',
    description,
    private: isPrivate,
    unread_count: 0,
    last_read_message_id: null,
    is_member: false,
    last_message_at: lastMessageAt,
  })
  const owner = await c.api({ method: 'GET', url: '/api/v1/channels', headers: bearer(c.tok.owner) })
  t.equal(
    owner.body,
    JSON.stringify([
      notJoined(alpha.id, 'alpha', TRICKY, at(last.id)),
      notJoined(quiet.id, 'quiet', '', null),
      notJoined(never.id, 'never read', 'never read channel', at(neverLast.id)),
      notJoined(secret.id, 'secret', '', null, true),
      notJoined(others.id, 'not mine', 'not mine channel', at(othersLast.id)),
    ]),
    'the owner: the regular channels it reads without being a member',
  )

  // Nobody's channels: an empty array, not null.
  const observer = await c.api({ method: 'GET', url: '/api/v1/channels', headers: bearer(c.tok.observer) })
  t.equal(observer.body, '[]')
})

t.test('last activity when the marked message is deleted, with and without messages after it', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'general', { members: [c.ws.agents[1]!.id] })
  const older = await post(c.api, c.tok.a2, ch.id, 'older')
  const marked = await post(c.api, c.tok.a2, ch.id, 'read up to here')
  await c.api({ method: 'PUT', url: `/api/v1/channels/${ch.id}/read`, headers: bearer(c.tok.a1), payload: { message_id: marked.id } })
  const itemOf = async () => (await c.api({ method: 'GET', url: '/api/v1/channels', headers: bearer(c.tok.a1) })).json()[0]
  t.same(await itemOf(), {
    id: ch.id,
    name: 'general',
    type: 'channel',
    description: 'general channel',
    private: false,
    unread_count: 0,
    last_read_message_id: marked.id,
    is_member: true,
    last_message_at: at(marked.id),
  })

  const gone = await c.api({ method: 'DELETE', url: `/api/v1/channels/${ch.id}/messages/${marked.id}`, headers: bearer(c.tok.a2) })
  t.equal(gone.statusCode, 204)
  const afterDelete = await itemOf()
  t.equal(afterDelete.last_message_at, at(older.id), 'nothing at or after the marker: the newest message before it')
  t.equal(afterDelete.last_read_message_id, marked.id, 'the marker stays where it was')
  t.equal(afterDelete.unread_count, 0)

  const newer = await post(c.api, c.tok.a2, ch.id, 'newer')
  const withNewer = await itemOf()
  t.equal(withNewer.last_message_at, at(newer.id))
  t.equal(withNewer.unread_count, 1)
})
