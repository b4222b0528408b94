// Pick an agent or a human from the workspace directory: a filter box and a list of buttons.
// Enter in the box picks the first match; the arrow keys move between the box and the list.
import { useId, useMemo, useRef, useState, type KeyboardEvent } from 'react'
import { AgentBadge } from '../ui/AgentBadge.tsx'
import { OnlineDot } from '../ui/OnlineDot.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { roleLabel, useDirectory, type Person } from './queries.ts'

export function PersonPicker({ label, exclude, busy, onPick, emptyText }: { label: string; exclude: ReadonlySet<string>; busy: boolean; onPick: (person: Person) => void; emptyText: string }) {
  const directory = useDirectory()
  const [filter, setFilter] = useState('')
  const list = useRef<HTMLUListElement>(null)
  const inputId = useId()
  const pick = (person: Person) => {
    if (busy) return
    onPick(person)
    // Ready for the next one (and Escape then closes the dialog instead of clearing the box); the
    // option just picked may leave the list, so the focus goes back to the box.
    setFilter('')
    document.getElementById(inputId)?.focus()
  }
  const people = useMemo(() => {
    const words = filter.trim().toLocaleLowerCase().split(/\s+/).filter(Boolean)
    return (directory.data ?? []).filter((p) => {
      if (exclude.has(p.id)) return false
      const text = `${p.name} ${p.handle ?? ''} ${p.type === 'AGENT' ? 'agent' : ''}`.toLocaleLowerCase()
      return words.every((w) => text.includes(w))
    })
  }, [directory.data, exclude, filter])

  const options = () => Array.from(list.current?.querySelectorAll<HTMLButtonElement>('button') ?? [])
  const onInputKey = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'ArrowDown') {
      event.preventDefault()
      options()[0]?.focus()
    } else if (event.key === 'Enter') {
      event.preventDefault()
      if (people[0]) pick(people[0])
    }
  }
  const onListKey = (event: KeyboardEvent<HTMLUListElement>) => {
    if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return
    event.preventDefault()
    const all = options()
    const at = all.indexOf(document.activeElement as HTMLButtonElement)
    const next = at + (event.key === 'ArrowDown' ? 1 : -1)
    if (next < 0) document.getElementById(inputId)?.focus()
    else all[Math.min(next, all.length - 1)]?.focus()
  }

  return (
    <div className="picker">
      <label htmlFor={inputId}>{label}</label>
      <input id={inputId} type="search" value={filter} data-autofocus autoComplete="off" placeholder="Type a name" onChange={(e) => setFilter(e.target.value)} onKeyDown={onInputKey} />
      {directory.isPending && <p className="muted small">Loading people…</p>}
      <ErrorNote error={directory.error} />
      {directory.isSuccess && people.length === 0 && <p className="muted small">{filter.trim() ? `Nobody matches “${filter.trim()}”.` : emptyText}</p>}
      <ul className="picker-list" ref={list} onKeyDown={onListKey} aria-label="People">
        {people.map((person) => (
          <li key={person.id}>
            <button type="button" className="person-option" disabled={busy} onClick={() => pick(person)} data-testid="person-option">
              <span className="person-name">{person.name}</span>
              {person.type === 'AGENT' && <AgentBadge />}
              <OnlineDot memberId={person.id} withStatus />
              {person.handle && person.handle !== person.name && <span className="muted small">@{person.handle}</span>}
              <span className="muted small person-role">{roleLabel(person)}</span>
            </button>
          </li>
        ))}
      </ul>
    </div>
  )
}
