// GET /api/v1/directory: every agent and human a caller may pick (start a DM, add to a channel),
// with type, display name, role, owner flag and status; no e-mail; the same for every caller.
import t from 'tap'
import { uuidv7 } from '../../src/lib/ids.ts'
import { setup } from './fixtures/support.ts'
import { bearer } from '../support/index.ts'

t.test('GET /directory lists agents then humans, the same for every kind of caller', async (t) => {
  const c = await setup(t)
  // An invited human (no password yet) is in it; an account awaiting approval is not.
  const invited = await c.app.db.prisma.user.create({ data: { id: uuidv7(), email: 'zed@example.com', displayName: 'Zed', role: 'member', status: 'invited' } })
  await c.app.db.prisma.user.create({ data: { id: uuidv7(), email: 'pending@example.com', displayName: 'Pending', role: 'member', awaitingApproval: true } })

  const res = await c.api({ method: 'GET', url: '/api/v1/directory', headers: bearer(c.tok.member) })
  t.equal(res.statusCode, 200)
  const agent = (id: string, name: string, role: string) => ({
    id,
    type: 'AGENT',
    name,
    handle: name,
    avatar_url: null,
    role,
    is_owner: false,
    status: 'active',
    online: false,
    last_seen_at: null,
    status_text: null,
  })
  const human = (id: string, name: string, role: string, isOwner = false, status = 'active') => ({
    id,
    type: 'HUMAN',
    name,
    handle: null,
    avatar_url: null,
    role,
    is_owner: isOwner,
    status,
    online: false,
    last_seen_at: null,
    status_text: null,
  })
  t.same(res.json(), [
    agent(c.ws.agents[0]!.id, 'agent-1', 'member'),
    agent(c.ws.agents[1]!.id, 'agent-2', 'member'),
    agent(c.ws.primary.id, 'primary-agent', 'admin'),
    human(c.ws.member.id, 'member', 'member'),
    human(c.ws.observer.id, 'observer', 'observer'),
    human(c.ws.owner.id, 'owner', 'admin', true),
    human(invited.id, 'Zed', 'member', false, 'invited'),
  ])
  t.notMatch(res.body, /@example\.com/, 'no e-mail address in it')
  for (const token of [c.tok.owner, c.tok.observer, c.tok.primary, c.tok.a1]) {
    const other = await c.api({ method: 'GET', url: '/api/v1/directory', headers: bearer(token) })
    t.equal(other.statusCode, 200)
    t.same(other.json(), res.json(), 'every caller sees the same directory')
  }
})

t.test('GET /directory: no credential 401, a bad one 401, an account awaiting approval 403', async (t) => {
  const c = await setup(t)
  const none = await c.api({ method: 'GET', url: '/api/v1/directory' })
  t.same([none.statusCode, none.json().code], [401, 'UNAUTHORIZED'])
  const bad = await c.api({ method: 'GET', url: '/api/v1/directory', headers: bearer('svc_not-a-key') })
  t.same([bad.statusCode, bad.json().code], [401, 'UNAUTHORIZED'])
  const pending = await c.app.db.prisma.user.create({ data: { id: uuidv7(), email: 'pending@example.com', displayName: 'Pending', role: 'member', awaitingApproval: true } })
  const refused = await c.api({ method: 'GET', url: '/api/v1/directory', headers: bearer(c.app.signUserToken(pending.id)) })
  t.same([refused.statusCode, refused.json().code], [403, 'APPROVAL_PENDING'])
})
