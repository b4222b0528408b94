// A ready workspace for tests of features beyond identity: an owner (admin, JWT), agents with API
// keys, a member and an observer (JWTs). Seeded directly in the database so those tests do not
// depend on the bootstrap endpoint's details; bootstrap itself is tested in test/identity.
import type { FastifyInstance } from 'fastify'
import { uuidv7 } from '../../src/lib/ids.ts'
import { API_KEY_PREFIX, maskSecret, newSecret, sha256Hex } from '../../src/lib/tokens.ts'
import { forgetWorkspaceSettings } from '../../src/modules/workspace/settings.ts'

// bcrypt (cost 12) of 'correct horse battery staple', computed once: hashing per test is slow.
export const FIXTURE_PASSWORD = 'correct horse battery staple'
export const FIXTURE_PASSWORD_HASH = '$2b$12$Jf/2owg502Br.PvyUackIuoMPn32F.nd4Q85VNghJkZxqDWW5wqv.'

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

async function seedAgent(app: FastifyInstance, name: string, ownerId: string | null, isPrimary = false): Promise<SeededAgent> {
  const key = newSecret(API_KEY_PREFIX)
  const agent = await app.db.prisma.agent.create({
    data: {
      id: uuidv7(),
      name,
      displayName: name,
      isPrimary,
      ownerId,
      apiKeys: { create: { id: uuidv7(), name: 'default', keyHash: sha256Hex(key), maskedKey: maskSecret(key, API_KEY_PREFIX) } },
    },
    include: { apiKeys: true },
  })
  return { id: agent.id, name, key, keyId: agent.apiKeys[0]!.id }
}

async function seedHuman(app: FastifyInstance, email: string, role: 'admin' | 'member' | 'observer', isOwner = false): Promise<SeededHuman> {
  const user = await app.db.prisma.user.create({
    data: { id: uuidv7(), email, displayName: email.split('@')[0]!, passwordHash: FIXTURE_PASSWORD_HASH, role, isOwner, status: 'active' },
  })
  return { id: user.id, email, token: app.signUserToken(user.id) }
}

export async function seedWorkspace(app: FastifyInstance, agentCount = 2): Promise<Workspace> {
  await app.db.prisma.instance.create({ data: { id: uuidv7() } })
  const owner = await seedHuman(app, 'owner@example.com', 'admin', true)
  const member = await seedHuman(app, 'member@example.com', 'member')
  const observer = await seedHuman(app, 'observer@example.com', 'observer')
  const primary = await seedAgent(app, 'primary-agent', owner.id, true)
  const agents: SeededAgent[] = []
  for (let i = 1; i <= agentCount; i++) agents.push(await seedAgent(app, `agent-${i}`, owner.id))
  return { owner, member, observer, primary, agents }
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
