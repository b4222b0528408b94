// Ctrl+K / Cmd+K: a quick switcher that filters the conversations and the people of the workspace
// as one types; Enter (or a click) opens the conversation, or the DM with that person (the API
// answers the existing DM when there is one). Arrow keys move through the results.
import { useEffect, useMemo, useState, type KeyboardEvent } from 'react'
import { useLocation } from 'wouter'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useSignedInSession } from '../api/session.ts'
import { reconcileSoon } from '../channels/sidebar-state.ts'
import { openDm as startDm, useChannels, useDms } from '../channels/queries.ts'
import { useDirectory } from '../people/queries.ts'
import { Dialog } from '../ui/Dialog.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'

interface Choice {
  key: string
  label: string
  kind: 'Channel' | 'Direct message' | 'Person'
  channelId?: string
  personId?: string
}

const MAX_RESULTS = 12

/** The event a button sends to open the switcher (phones have no Ctrl+K). */
export const OPEN_SWITCHER = 'ams:open-switcher'
export const openSwitcher = () => window.dispatchEvent(new Event(OPEN_SWITCHER))

export function Switcher({ onNavigate }: { onNavigate: () => void }) {
  const [open, setOpen] = useState(false)
  useEffect(() => {
    const onKey = (event: globalThis.KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === 'k') {
        event.preventDefault()
        setOpen(true)
      }
    }
    const show = () => setOpen(true)
    window.addEventListener('keydown', onKey)
    window.addEventListener(OPEN_SWITCHER, show)
    return () => {
      window.removeEventListener('keydown', onKey)
      window.removeEventListener(OPEN_SWITCHER, show)
    }
  }, [])
  if (!open) return null
  return (
    <Dialog title="Jump to a conversation" className="switcher" onClose={() => setOpen(false)}>
      <SwitcherBody
        onDone={() => {
          setOpen(false)
          onNavigate()
        }}
      />
    </Dialog>
  )
}

function SwitcherBody({ onDone }: { onDone: () => void }) {
  const session = useSignedInSession()
  const channels = useChannels()
  const dms = useDms()
  const directory = useDirectory()
  const queryClient = useQueryClient()
  const [, navigate] = useLocation()
  const [filter, setFilter] = useState('')
  const [active, setActive] = useState(0)
  const choices = useMemo(() => {
    const all: Choice[] = []
    for (const c of channels.data ?? []) if (c.type === 'channel') all.push({ key: c.id, label: `#${c.name}`, kind: 'Channel', channelId: c.id })
    const withDm = new Set<string>()
    for (const d of dms.data ?? []) {
      withDm.add(d.participant.id)
      all.push({ key: d.id, label: d.participant.name, kind: 'Direct message', channelId: d.id })
    }
    for (const p of directory.data ?? []) if (p.id !== session.user_id && !withDm.has(p.id)) all.push({ key: p.id, label: p.name, kind: 'Person', personId: p.id })
    const needle = filter.trim().toLowerCase().replace(/^#/, '')
    const hits = needle ? all.filter((c) => c.label.toLowerCase().replace(/^#/, '').includes(needle)) : all
    // Names that start with what was typed come first.
    return hits.sort((a, b) => Number(!a.label.toLowerCase().replace(/^#/, '').startsWith(needle)) - Number(!b.label.toLowerCase().replace(/^#/, '').startsWith(needle))).slice(0, MAX_RESULTS)
  }, [channels.data, dms.data, directory.data, filter, session.user_id])
  const openDm = useMutation({
    mutationFn: startDm,
    onSuccess: (dm) => {
      void reconcileSoon(queryClient, 0)
      navigate(`/c/${dm.id}`, { state: { focusComposer: true } })
      onDone()
    },
  })
  const pick = (choice: Choice | undefined) => {
    if (!choice) return
    if (choice.channelId) {
      navigate(`/c/${choice.channelId}`, { state: { focusComposer: true } })
      onDone()
    } else if (choice.personId) openDm.mutate(choice.personId)
  }
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'ArrowDown') {
      event.preventDefault()
      setActive((i) => Math.min(i + 1, choices.length - 1))
    } else if (event.key === 'ArrowUp') {
      event.preventDefault()
      setActive((i) => Math.max(i - 1, 0))
    } else if (event.key === 'Enter') {
      event.preventDefault()
      pick(choices[active])
    }
  }
  const current = choices[Math.min(active, choices.length - 1)]
  return (
    <div className="switcher-body">
      <label htmlFor="switcher-input" className="visually-hidden">
        Conversation or person
      </label>
      <input
        id="switcher-input"
        data-autofocus
        role="combobox"
        aria-expanded="true"
        aria-controls="switcher-results"
        aria-activedescendant={current ? `switch-${current.key}` : undefined}
        autoComplete="off"
        placeholder="Type a channel or a name"
        value={filter}
        onChange={(e) => {
          setFilter(e.target.value)
          setActive(0)
        }}
        onKeyDown={onKeyDown}
      />
      <ul id="switcher-results" role="listbox" aria-label="Matches" className="switcher-results">
        {choices.map((choice, i) => (
          <li
            key={choice.key}
            id={`switch-${choice.key}`}
            role="option"
            aria-selected={choice === current}
            className={choice === current ? 'switcher-option active' : 'switcher-option'}
            onMouseEnter={() => setActive(i)}
            onClick={() => pick(choice)}
          >
            <span>{choice.label}</span>
            <span className="muted small">{choice.kind}</span>
          </li>
        ))}
      </ul>
      {choices.length === 0 && <p className="muted small">Nothing matches “{filter}”.</p>}
      <ErrorNote error={openDm.error} />
      <p className="muted small">↑ ↓ to choose · Enter to open · Escape to close</p>
    </div>
  )
}
