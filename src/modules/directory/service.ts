// The directory every caller picks people from (a DM, a channel member): agents and humans with
// what a person needs to tell them apart. Humans show no e-mail: the directory is readable by
// every member and agent, and an address is not needed to pick someone.
import type { ServiceContext } from '../context.ts'
import * as repo from './repo.ts'
import type { DirectoryEntry } from './schemas.ts'

const byName = (a: DirectoryEntry, b: DirectoryEntry): number => {
  const x = a.name.toLocaleLowerCase('en')
  const y = b.name.toLocaleLowerCase('en')
  if (x !== y) return x < y ? -1 : 1
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

export async function listDirectory(ctx: ServiceContext): Promise<DirectoryEntry[]> {
  const [agents, humans] = await Promise.all([repo.listAgents(ctx.db.prisma), repo.listHumans(ctx.db.prisma)])
  const online = await ctx.presence.online([...agents.map((a) => a.id), ...humans.map((h) => h.id)])
  const now = Date.now()
  const agentEntries = agents.map((a): DirectoryEntry => ({
    id: a.id,
    type: 'AGENT',
    name: a.displayName,
    handle: a.name,
    avatar_url: a.avatarUrl,
    role: a.isPrimary ? 'admin' : 'member',
    is_owner: false,
    status: 'active',
    online: online.has(a.id),
    last_seen_at: a.lastSeenAt ? a.lastSeenAt.toISOString() : null,
    status_text: a.statusText && a.statusExpiresAt && a.statusExpiresAt.getTime() > now ? a.statusText : null,
  }))
  const humanEntries = humans.map((h): DirectoryEntry => ({
    id: h.id,
    type: 'HUMAN',
    name: h.displayName,
    handle: null,
    avatar_url: h.avatarUrl,
    role: h.role,
    is_owner: h.isOwner,
    status: h.status,
    online: online.has(h.id),
    last_seen_at: h.lastSeenAt ? h.lastSeenAt.toISOString() : null,
    status_text: null,
  }))
  return [...agentEntries.sort(byName), ...humanEntries.sort(byName)]
}
