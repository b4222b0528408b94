// POST /api/v1/bootstrap: provisions the whole workspace in one transaction (instance, owner user,
// primary agent and key, further agents and keys, invited humans and their invites, the default
// channel and its members) or stores nothing. A transaction-scoped advisory lock serialises
// concurrent calls, so exactly one of them finds zero users and succeeds; the others get 409.
import type { ServiceContext } from '../context.ts'
import type { Prisma } from '../../db/client.ts'
import { channelCreated, memberJoined } from '../../events/builders.ts'
import { AppError } from '../../lib/errors.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { hashPassword } from '../../lib/password.ts'
import { assertMetadata, assertPassword, normalizeEmail } from '../accounts/rules.ts'
import { insertUser, userCount } from '../accounts/service.ts'
import { agentsNamed, newApiKey } from '../agents/service.ts'
import { displayNameFromEmail, inviteUrl, newInvite } from '../invites/service.ts'
import { createWorkspaceInstance, lockWorkspaceIn } from '../workspace/service.ts'
import * as repo from './repo.ts'
import type { BootstrapBody, BootstrapResult } from './schemas.ts'

export const DEFAULT_CHANNEL_NAME = 'general'

const alreadyBootstrapped = (): AppError => new AppError('ALREADY_BOOTSTRAPPED', 'the workspace is already bootstrapped (users exist)')
const duplicate = (message: string): AppError => new AppError('DUPLICATE_NAME', message)

type AgentProfile = BootstrapBody['primary_agent']['agent_profile']

/** The rules a schema cannot express: uniqueness within the call and the password's byte length. */
function checkInput(body: BootstrapBody): void {
  assertPassword(body.primary_agent.password)
  const names = new Set<string>()
  for (const profile of [body.primary_agent.agent_profile, ...(body.agents ?? [])]) {
    assertMetadata(profile.metadata)
    const key = profile.name.toLowerCase()
    if (names.has(key)) throw duplicate(`agent name '${profile.name}' appears more than once`)
    names.add(key)
  }
  const emails = new Set<string>([normalizeEmail(body.primary_agent.email)])
  for (const human of body.humans ?? []) {
    const email = normalizeEmail(human.email)
    if (emails.has(email)) throw duplicate(`e-mail '${email}' appears more than once`)
    emails.add(email)
  }
}

function agentRow(profile: AgentProfile, ownerId: string, isPrimary: boolean) {
  return {
    id: uuidv7(),
    name: profile.name,
    displayName: profile.display_name.trim(),
    description: profile.description ?? null,
    avatarUrl: profile.avatar_url ?? null,
    metadata: (profile.metadata ?? undefined) as Prisma.InputJsonValue | undefined,
    isPrimary,
    ownerId,
  }
}

export async function bootstrap(ctx: ServiceContext, body: BootstrapBody, clientAddress?: string): Promise<BootstrapResult> {
  checkInput(body)
  // Cheap early answer for the common repeat call, before the bcrypt work; the answer that
  // counts is the one under the lock below.
  if ((await userCount(ctx.db.prisma)) > 0) throw alreadyBootstrapped()
  const passwordHash = await hashPassword(body.primary_agent.password, ctx.config.passwordCost, { address: clientAddress, account: body.primary_agent.email.trim().toLowerCase() })

  try {
    return await ctx.events.transaction(async (tx, emit) => {
      await lockWorkspaceIn(tx)
      if ((await userCount(tx)) > 0) throw alreadyBootstrapped()
      const profiles = [body.primary_agent.agent_profile, ...(body.agents ?? [])]
      const taken = await agentsNamed(
        tx,
        profiles.map((p) => p.name),
      )
      if (taken.length) throw duplicate(`an agent named '${taken[0]!.name}' already exists`)

      const now = new Date()
      const instanceId = uuidv7()
      await createWorkspaceInstance(tx, instanceId)

      const ownerEmail = normalizeEmail(body.primary_agent.email)
      const owner = await insertUser(tx, {
        id: uuidv7(),
        email: ownerEmail,
        // The owner is a person, not the primary agent: their own name, or their e-mail's.
        displayName: body.primary_agent.display_name?.trim() ?? displayNameFromEmail(ownerEmail),
        passwordHash,
        role: 'admin',
        status: 'active',
        isOwner: true,
      })

      const agents = profiles.map((profile, i) => agentRow(profile, owner.id, i === 0))
      await repo.createAgents(tx, agents)
      const keys = agents.map((agent) => newApiKey(agent.id, 'bootstrap'))
      await repo.createApiKeys(
        tx,
        keys.map((k) => k.row),
      )

      const humans = (body.humans ?? []).map((h) => {
        const email = normalizeEmail(h.email)
        return {
          id: uuidv7(),
          email,
          displayName: h.display_name?.trim() ?? displayNameFromEmail(email),
          role: h.role ?? ('member' as const),
        }
      })
      if (humans.length)
        await repo.createUsers(
          tx,
          humans.map((h) => ({ ...h, status: 'invited' as const })),
        )
      const invites = humans.map((h) => newInvite(h.id, now))
      if (invites.length)
        await repo.createInvites(
          tx,
          invites.map((i) => i.row),
        )

      const primary = agents[0]!
      const channel = await repo.createChannel(tx, {
        id: uuidv7(),
        name: body.default_channel?.name?.trim() || DEFAULT_CHANNEL_NAME,
        topic: body.default_channel?.topic ?? null,
        type: 'channel',
        createdById: owner.id,
      })
      const members = [{ memberId: primary.id, memberType: 'AGENT' as const, name: primary.displayName }, ...humans.map((h) => ({ memberId: h.id, memberType: 'HUMAN' as const, name: h.displayName }))]
      await repo.addChannelMembers(
        tx,
        members.map((m) => ({ channelId: channel.id, memberId: m.memberId, memberType: m.memberType })),
      )

      emit('channel.created', channel.id, channelCreated(channel, { id: owner.id, type: 'HUMAN' }))
      for (const m of members) {
        emit('member.joined', channel.id, memberJoined(channel, { id: m.memberId, type: m.memberType, name: m.name }))
      }

      const token = ctx.tokens.sign(owner.id)
      const humanItems = humans.map((h, i) => ({
        user_id: h.id,
        email: h.email,
        display_name: h.displayName,
        role: h.role,
        invite_token: invites[i]!.token,
        invite_url: inviteUrl(ctx, invites[i]!.token),
        expires_at: (invites[i]!.row.expiresAt as Date).toISOString(),
      }))
      const primaryKey = keys[0]!
      return {
        primary_agent: {
          user_id: owner.id,
          agent_id: primary.id,
          email: owner.email,
          jwt_token: token,
          api_key: primaryKey.key,
          api_key_id: primaryKey.row.id,
          id: primary.id,
          name: primary.name,
          display_name: primary.displayName,
          owner_display_name: owner.displayName,
        },
        agents: agents.slice(1).map((agent, i) => ({
          agent_id: agent.id,
          id: agent.id,
          name: agent.name,
          display_name: agent.displayName,
          api_key: keys[i + 1]!.key,
          api_key_id: keys[i + 1]!.row.id,
        })),
        humans: humanItems,
        channel: { channel_id: channel.id, id: channel.id, name: channel.name, topic: channel.topic, members: members.map((m) => m.memberId) },
        instance_id: instanceId,
        api_key: primaryKey.key,
        token,
        channel_id: channel.id,
        invite_url: humanItems[0]?.invite_url ?? null,
      }
    })
  } catch (error) {
    if (error instanceof AppError) throw error
    throw new AppError('INTERNAL_ERROR', 'bootstrap failed; nothing was stored', { cause: error })
  }
}
