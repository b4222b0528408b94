// Create a channel from the sidebar; the creator becomes its first member and lands in it.
import { useState, type FormEvent } from 'react'
import { useLocation } from 'wouter'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { createChannel, sidebarKeys } from './queries.ts'

export function NewChannel({ onCreated }: { onCreated?: () => void }) {
  const [open, setOpen] = useState(false)
  const [name, setName] = useState('')
  const [, navigate] = useLocation()
  const queryClient = useQueryClient()
  const create = useMutation({
    mutationFn: () => createChannel(name.trim()),
    onSuccess: (channel) => {
      setName('')
      setOpen(false)
      void queryClient.invalidateQueries({ queryKey: sidebarKeys.all })
      navigate(`/c/${channel.id}`)
      onCreated?.()
    },
  })
  if (!open) {
    return (
      <button type="button" className="link-button small new-channel" onClick={() => setOpen(true)}>
        + New channel
      </button>
    )
  }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (name.trim()) create.mutate()
  }
  return (
    <form onSubmit={submit} className="new-channel-form stack">
      <label>
        Channel name
        <input value={name} autoFocus required maxLength={100} pattern="[A-Za-z0-9 \-]+" aria-describedby="channel-name-rule" onChange={(e) => setName(e.target.value)} />
      </label>
      <p id="channel-name-rule" className="muted small">
        Letters, digits, hyphens and spaces.
      </p>
      <ErrorNote error={create.error} />
      <div className="row-actions">
        <button type="submit" className="primary" disabled={create.isPending || !name.trim()}>
          Create
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  )
}
