// A channel's members: who is in it (AGENT badge, role), add any agent or human, remove someone
// or leave. What a person may do follows docs/access.md; the server decides anyway, and a refusal
// is shown in words.
import { useMemo, useState } from 'react'
import { useLocation } from 'wouter'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import type { components } from '../../sdk/schema'
import { useSignedInSession } from '../api/session.ts'
import { PersonPicker } from '../people/PersonPicker.tsx'
import { roleLabel, useDirectory, type Person } from '../people/queries.ts'
import { AgentBadge } from '../ui/AgentBadge.tsx'
import { OnlineDot } from '../ui/OnlineDot.tsx'
import { Dialog } from '../ui/Dialog.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { addMember, channelKeys, removeMember, sidebarKeys, useMembers } from './queries.ts'

type Channel = components['schemas']['Channel']
type Member = components['schemas']['Member']

export function MembersDialog({ channel, onClose }: { channel: Channel; onClose: () => void }) {
  const session = useSignedInSession()
  const members = useMembers(channel.id)
  const directory = useDirectory()
  const queryClient = useQueryClient()
  const [, navigate] = useLocation()
  const [done, setDone] = useState('')
  const people = useMemo(() => new Map((directory.data ?? []).map((p) => [p.id, p])), [directory.data])
  const memberIds = useMemo(() => new Set((members.data ?? []).map((m) => m.id)), [members.data])
  const refresh = () => Promise.all([queryClient.invalidateQueries({ queryKey: channelKeys.members(channel.id) }), queryClient.invalidateQueries({ queryKey: channelKeys.one(channel.id) })])

  const add = useMutation({
    mutationFn: (person: Person) => addMember(channel.id, person.id),
    onMutate: () => setDone(''),
    onSuccess: async (added) => {
      await refresh()
      setDone(`${added.name} was added to #${channel.name}.`)
    },
  })
  const remove = useMutation({
    mutationFn: (member: Member) => removeMember(channel.id, member.id),
    onMutate: () => setDone(''),
    onSuccess: async (_none, member) => {
      if (member.id === session.user_id) {
        await queryClient.invalidateQueries({ queryKey: sidebarKeys.all })
        onClose()
        // Anyone but the owner loses sight of the channel on leaving it.
        if (!session.is_owner) navigate('/')
        else await refresh()
        return
      }
      await refresh()
      setDone(`${member.name} was removed from #${channel.name}.`)
    },
  })

  const isAdmin = session.role === 'admin'
  const canAdd = session.role !== 'observer' && (channel.is_member || isAdmin)
  const canRemoveOthers = channel.created_by === session.user_id || isAdmin
  const busy = add.isPending || remove.isPending
  return (
    <Dialog title={`Members of #${channel.name}`} onClose={onClose} className="members-dialog">
      {members.isPending && <p className="muted small">Loading members…</p>}
      <ErrorNote error={members.error} />
      <ul className="member-list" aria-label="Members">
        {(members.data ?? []).map((member) => {
          const person = people.get(member.id)
          const me = member.id === session.user_id
          return (
            <li key={member.id} className="member-row" data-testid="member">
              <span className="person-name">
                {member.name}
                {me && <span className="muted"> (you)</span>}
              </span>
              {member.type === 'AGENT' && <AgentBadge />}
              <OnlineDot memberId={member.id} />
              <span className="muted small person-role">
                {person ? roleLabel(person) : member.type === 'AGENT' ? 'Agent' : 'Member'}
                {channel.created_by === member.id && ' · created this channel'}
              </span>
              {(me || canRemoveOthers) && (
                <button
                  type="button"
                  className="link-button small danger"
                  disabled={busy}
                  onClick={() => remove.mutate(member)}
                  aria-label={me ? `Leave #${channel.name}` : `Remove ${member.name} from #${channel.name}`}
                >
                  {me ? 'Leave' : 'Remove'}
                </button>
              )}
            </li>
          )
        })}
      </ul>
      <ErrorNote error={remove.error} />
      {canAdd ? (
        <section className="add-members" aria-label="Add people">
          <PersonPicker label="Add a person or agent" exclude={memberIds} busy={busy} onPick={(person) => add.mutate(person)} emptyText="Everyone in the workspace is already a member." />
          <ErrorNote error={add.error} />
        </section>
      ) : (
        <p className="muted small">{session.role === 'observer' ? 'Observers can see the members but not change them.' : 'Join the channel to add people to it.'}</p>
      )}
      {/* Always in the page, so screen readers announce what changes in it. */}
      <p role="status" className={done ? 'notice small' : 'visually-hidden'}>
        {done}
      </p>
    </Dialog>
  )
}
