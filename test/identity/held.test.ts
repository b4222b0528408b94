// The re-check of held credentials (src/modules/identity/held.ts), which the WebSocket, the event
// streams and MCP share: of the holders given, exactly those whose credential no longer holds.
// Agent keys are sent as one uuid[] literal and only the dead ones come back; the case that
// matters most, thousands of live keys, answers no row.
import t from 'tap'
import { uuidv7 } from '../../src/lib/ids.ts'
import { revokedHolders, type HeldCredential } from '../../src/modules/identity/held.ts'
import { build } from '../helper.ts'
import { seedWorkspace } from '../support/index.ts'

const agent = (id: string, keyId: string): { name: string; credential: HeldCredential } => ({
  name: `agent ${id}`,
  credential: { principal: { kind: 'agent', id, name: 'a', displayName: 'a', keyId }, expiresAt: null, sessionVersion: null },
})
const human = (name: string, id: string, sessionVersion: number, expiresAt: number | null = null): { name: string; credential: HeldCredential } => ({
  name,
  credential: { principal: { kind: 'human', id, email: 'x@example.com', displayName: 'x', role: 'member', isOwner: false }, expiresAt, sessionVersion },
})

t.test('exactly the holders whose credential no longer holds, among many live ones', async (t) => {
  const { app } = await build(t)
  const ws = await seedWorkspace(app, 3)
  const [live, revoked, deleted] = ws.agents
  await app.db.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [revoked!.keyId])
  await app.db.pool.query('DELETE FROM api_keys WHERE id = $1', [deleted!.keyId])
  await app.db.pool.query('UPDATE users SET session_version = 2 WHERE id = $1', [ws.member.id])
  await app.db.pool.query("UPDATE users SET status = 'invited' WHERE id = $1", [ws.observer.id])

  const holders = [
    // The same live key held by many connections: none of them is revoked.
    ...Array.from({ length: 2_000 }, () => agent(live!.id, live!.keyId)),
    agent(revoked!.id, revoked!.keyId),
    agent(deleted!.id, deleted!.keyId),
    agent(uuidv7(), uuidv7()),
    human('the owner, current session', ws.owner.id, 0),
    human('the owner, expired token', ws.owner.id, 0, Date.now() - 1),
    human('the member, session before a password change', ws.member.id, 1),
    human('the member, current session', ws.member.id, 2),
    human('an account no longer active', ws.observer.id, 0),
  ]
  const dead = await revokedHolders(app.db.pool, holders)
  t.same(
    dead.map((h) => h.name),
    [`agent ${revoked!.id}`, `agent ${deleted!.id}`, holders[2_002]!.name, 'the owner, expired token', 'the member, session before a password change', 'an account no longer active'],
    'the revoked, deleted and unknown keys, the expired token, the older session and the inactive account',
  )
  t.same(await revokedHolders(app.db.pool, holders.slice(0, 2_000)), [], 'live keys only: none')
  t.same(await revokedHolders(app.db.pool, []), [], 'no holder: none')
})
