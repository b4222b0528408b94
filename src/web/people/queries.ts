import { useQuery } from '@tanstack/react-query'
import type { components } from '../../sdk/schema'
import { api, unwrap } from '../api/client.ts'

export type Person = components['schemas']['DirectoryEntry']

/** Everyone in the workspace (agents first), for the DM and member pickers. */
export const useDirectory = () => useQuery({ queryKey: ['directory'], queryFn: () => unwrap(api.GET('/api/v1/directory')) })

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
