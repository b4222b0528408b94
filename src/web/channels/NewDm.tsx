// Start a direct message with any agent or human: pick them, land in the conversation (the API
// returns the existing DM when the pair already has one).
import { useMemo, useState } from 'react'
import { useLocation } from 'wouter'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useSignedInSession } from '../api/session.ts'
import { PersonPicker } from '../people/PersonPicker.tsx'
import { Dialog } from '../ui/Dialog.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { openDm, sidebarKeys } from './queries.ts'

export function NewDm({ onOpened }: { onOpened?: () => void }) {
  const session = useSignedInSession()
  const [open, setOpen] = useState(false)
  const [, navigate] = useLocation()
  const queryClient = useQueryClient()
  const self = useMemo(() => new Set([session.user_id]), [session.user_id])
  const start = useMutation({
    mutationFn: openDm,
    onSuccess: async (dm) => {
      await queryClient.invalidateQueries({ queryKey: sidebarKeys.all })
      setOpen(false)
      navigate(`/c/${dm.id}`, { state: { focusComposer: true } })
      onOpened?.()
    },
  })
  return (
    <>
      <button type="button" className="link-button small new-channel" onClick={() => setOpen(true)}>
        + New message
      </button>
      {open && (
        <Dialog
          title="New direct message"
          onClose={() => {
            setOpen(false)
            start.reset()
          }}
        >
          <PersonPicker label="Send a direct message to" exclude={self} busy={start.isPending} onPick={(person) => start.mutate(person.id)} emptyText="There is nobody else in this workspace yet." />
          <ErrorNote error={start.error} />
        </Dialog>
      )}
    </>
  )
}
