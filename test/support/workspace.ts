// A ready workspace for tests of features beyond identity: an owner (admin, JWT), agents with API
// keys, a member and an observer (JWTs). Seeded directly in the database so those tests do not
// depend on the bootstrap endpoint's details; bootstrap itself is tested in test/identity.
import type { FastifyInstance } from 'fastify'
import { uuidv7 } from '../../src/lib/ids.ts'
import { BCRYPT_COST } from '../../src/lib/password.ts'
import { API_KEY_PREFIX, maskSecret, newSecret, sha256Hex } from '../../src/lib/tokens.ts'
import { forgetWorkspaceSettings } from '../../src/modules/workspace/settings.ts'
import { TEST_PASSWORD_COST } from '../helper.ts'

// bcrypt of 'correct horse battery staple', computed once: hashing per test is slow. At the real
// cost (12) for apps built with it, else at TEST_PASSWORD_COST (test/helper.ts).
export const FIXTURE_PASSWORD = 'correct horse battery staple'
export const FIXTURE_PASSWORD_HASH = '$2b$12$Jf/2owg502Br.PvyUackIuoMPn32F.nd4Q85VNghJkZxqDWW5wqv.'
const FIXTURE_HASHES: Record<number, string> = {
  [BCRYPT_COST]: FIXTURE_PASSWORD_HASH,
  [TEST_PASSWORD_COST]: '$2b$04$US7G8dbQbb0GjAYiZeBSzOaN8JCQt3Oku1tU7QzcFig3BVJPKHJAq',
}

/** The fixture password's hash at the cost `app` hashes new passwords with. */
function fixtureHash(app: FastifyInstance): string {
  const hash = FIXTURE_HASHES[app.config.passwordCost]
  if (!hash) throw new Error(`no fixture password hash at bcrypt cost ${app.config.passwordCost}`)
  return hash
}

export interface SeededAgent {
  id: string
  name: string
  key: string
  keyId: string
}

export interface SeededHuman {
  id: string
  email: string
  token: string
}

export interface Workspace {
  owner: SeededHuman
  member: SeededHuman
  observer: SeededHuman
  primary: SeededAgent
  agents: SeededAgent[]
}

interface AgentRow extends SeededAgent {
  ownerId: string
  isPrimary: boolean
}

function newAgent(name: string, ownerId: string, isPrimary = false): AgentRow {
  return { id: uuidv7(), name, key: newSecret(API_KEY_PREFIX), keyId: uuidv7(), ownerId, isPrimary }
}

function newHuman(app: FastifyInstance, email: string): SeededHuman {
  const id = uuidv7()
  return { id, email, token: app.signUserToken(id) }
}

/**
 * One statement, straight to PostgreSQL (a dozen ORM round trips were a third of a test's set-up).
 * Rows are created in order, each with its own clock reading, as one at a time would.
 */
export async function seedWorkspace(app: FastifyInstance, agentCount = 2): Promise<Workspace> {
  const owner = newHuman(app, 'owner@example.com')
  const member = newHuman(app, 'member@example.com')
  const observer = newHuman(app, 'observer@example.com')
  const primary = newAgent('primary-agent', owner.id, true)
  const agents = Array.from({ length: agentCount }, (_, i) => newAgent(`agent-${i + 1}`, owner.id))
  const all = [primary, ...agents]
  const humans: [SeededHuman, string, boolean][] = [
    [owner, 'admin', true],
    [member, 'member', false],
    [observer, 'observer', false],
  ]
  await app.db.pool.query(
    `WITH instance AS (INSERT INTO instance (id) VALUES ($1::uuid)),
     humans AS (
       INSERT INTO users (id, email, display_name, password_hash, role, is_owner, status, created_at)
       SELECT h.id, h.email, split_part(h.email, '@', 1), $2, h.role::user_role, h.is_owner, 'active', clock_timestamp()
       FROM unnest($3::uuid[], $4::text[], $5::text[], $6::boolean[]) WITH ORDINALITY AS h(id, email, role, is_owner, n) ORDER BY n
     ),
     agents AS (
       INSERT INTO agents (id, name, display_name, is_primary, owner_id, created_at, updated_at)
       SELECT a.id, a.name, a.name, a.is_primary, a.owner_id, clock_timestamp(), clock_timestamp()
       FROM unnest($7::uuid[], $8::text[], $9::boolean[], $10::uuid[]) WITH ORDINALITY AS a(id, name, is_primary, owner_id, n) ORDER BY n
     )
     INSERT INTO api_keys (id, agent_id, name, key_hash, masked_key, created_at)
     SELECT k.id, k.agent_id, 'default', k.key_hash, k.masked_key, clock_timestamp()
     FROM unnest($11::uuid[], $7::uuid[], $12::text[], $13::text[]) WITH ORDINALITY AS k(id, agent_id, key_hash, masked_key, n) ORDER BY n`,
    [
      uuidv7(),
      fixtureHash(app),
      humans.map(([h]) => h.id),
      humans.map(([h]) => h.email),
      humans.map(([, role]) => role),
      humans.map(([, , isOwner]) => isOwner),
      all.map((a) => a.id),
      all.map((a) => a.name),
      all.map((a) => a.isPrimary),
      all.map((a) => a.ownerId),
      all.map((a) => a.keyId),
      all.map((a) => sha256Hex(a.key)),
      all.map((a) => maskSecret(a.key, API_KEY_PREFIX)),
    ],
  )
  const seeded = ({ id, name, key, keyId }: AgentRow): SeededAgent => ({ id, name, key, keyId })
  return { owner, member, observer, primary: seeded(primary), agents: agents.map(seeded) }
}

/**
 * For tests about something else that post more agent messages in a row than the loop guard
 * allows by default (20 turns or a chain of 20 replies per conversation; docs/loops.md):
 * turns the guard off for this workspace, as the owner could with PATCH /api/v1/workspace.
 */
export async function disableLoopGuard(app: FastifyInstance): Promise<void> {
  await app.db.prisma.instance.updateMany({ data: { loopGuardEnabled: false } })
  forgetWorkspaceSettings(app.ctx)
}
