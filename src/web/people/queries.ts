import { useQuery } from '@tanstack/react-query'
import type { components } from '../../sdk/schema'
import { api, unwrap } from '../api/client.ts'

export type Person = components['schemas']['DirectoryEntry']

export const peopleKeys = {
  directory: ['directory'] as const,
  /** The signed-in account as the server knows it (GET /auth/me). */
  me: ['me'] as const,
}

/**
 * This tab's own presence, as its socket says (directory-state.ts, ownPresence): the server's
 * directory may have been read before that socket counted, and an answer arriving after the
 * socket went live would otherwise show this person offline until the next change.
 */
let own: { id: string; online: boolean } | null = null
export const noteOwnPresence = (id: string, online: boolean): void => void (own = { id, online })

async function fetchDirectory(): Promise<Person[]> {
  const people = await unwrap(api.GET('/api/v1/directory'))
  const mine = own
  return mine ? people.map((p) => (p.id === mine.id && p.online !== mine.online ? { ...p, online: mine.online } : p)) : people
}

/** Everyone in the workspace (agents first), for the DM and member pickers. */
export const useDirectory = () => useQuery({ queryKey: peopleKeys.directory, queryFn: fetchDirectory })

/** Who is signed in: it does not change with events, so it is asked once. */
export const useMe = () => useQuery({ queryKey: peopleKeys.me, queryFn: () => unwrap(api.GET('/api/v1/auth/me')), staleTime: Infinity })

export type ProfileChange = { display_name?: string; avatar_url?: string | null; current_password?: string; new_password?: string }

export const updateMe = (change: ProfileChange) => unwrap(api.PATCH('/api/v1/auth/me', { body: change }))

/** How a person's role reads next to their name. */
export function roleLabel(person: Pick<Person, 'type' | 'role' | 'is_owner' | 'status'>): string {
  const role = person.is_owner
    ? 'Owner'
    : person.type === 'AGENT'
      ? person.role === 'admin'
        ? 'Primary agent'
        : 'Agent'
      : person.role === 'admin'
        ? 'Admin'
        : person.role === 'observer'
          ? 'Observer (read only)'
          : 'Member'
  return person.status === 'invited' ? `${role} · invited` : role
}
