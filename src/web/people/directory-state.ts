// The people directory kept current from the socket's signals instead of refetched: presence
// (an agent's or a human's first socket opened, or last one closed), an agent's status, a
// person's new name or picture. With presence for humans, refetching the whole directory on each
// of these frames would have every open page download it whenever anyone connects.
import type { QueryClient } from '@tanstack/react-query'
import type { ControlFrame } from '../../sdk/frames.ts'
import { noteOwnPresence, peopleKeys, type Person } from './queries.ts'

const change = (queryClient: QueryClient, id: string, update: (person: Person) => Person) =>
  queryClient.setQueryData<Person[]>(peopleKeys.directory, (people) => people?.map((p) => (p.id === id ? update(p) : p)))

/** Applies a presence, agent_status or user_updated frame; false for any other frame. */
export function applyPeopleFrame(queryClient: QueryClient, frame: ControlFrame): boolean {
  switch (frame.type) {
    case 'presence':
      change(queryClient, frame.member_id, (p) => ({ ...p, online: frame.online, last_seen_at: frame.last_seen_at }))
      return true
    case 'agent_status':
      change(queryClient, frame.agent_id, (p) => ({ ...p, status_text: frame.text }))
      return true
    case 'user_updated':
      change(queryClient, frame.user_id, (p) => ({ ...p, name: frame.display_name, avatar_url: frame.avatar_url }))
      return true
    default:
      return false
  }
}

/**
 * This person's own presence: the server tells everyone else (a presence frame goes to all but
 * the one who connected), so the tab sets its own dot from its socket's state.
 */
export function ownPresence(queryClient: QueryClient, me: string, online: boolean): void {
  noteOwnPresence(me, online)
  change(queryClient, me, (p) => (p.online === online ? p : { ...p, online }))
}
