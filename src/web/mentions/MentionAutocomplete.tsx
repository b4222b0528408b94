// `@` autocomplete for a text box: typing `@` and the start of a name lists the conversation's
// members whose handle (or display name) starts with it; ↑/↓ choose, Enter or Tab insert
// `@handle `, Escape closes. Handles follow the server's rules (src/lib/mentions.ts), so what is
// inserted is what resolves. The box keeps the focus; the list is tied to it with
// aria-controls / aria-activedescendant.
import { useMemo, useState, type KeyboardEvent, type RefObject } from 'react'
import { handleOf } from '../../lib/mentions.ts'
import { useMembers } from '../channels/queries.ts'
import { useDirectory } from '../people/queries.ts'

const MAX_SUGGESTIONS = 6
// The `@name` being typed just before the caret (same start rule as the server's tokens).
const TYPING_RE = /(?:^|[^\p{L}\p{N}_.+@-])@([\p{L}\p{N}-]*)$/u

interface Candidate {
  id: string
  name: string
  handle: string
  agent: boolean
}

function useCandidates(channelId: string): Candidate[] {
  const members = useMembers(channelId)
  const directory = useDirectory()
  return useMemo(() => {
    const agentNames = new Map((directory.data ?? []).filter((p) => p.type === 'AGENT').map((p) => [p.id, p.handle ?? p.name]))
    return (members.data ?? [])
      .map((m) => {
        const name = m.type === 'AGENT' ? (agentNames.get(m.id) ?? m.name) : m.name
        return { id: m.id, name: m.name, handle: handleOf({ id: m.id, type: m.type, name }), agent: m.type === 'AGENT' }
      })
      .filter((c) => c.handle)
  }, [members.data, directory.data])
}

export function useMentionAutocomplete(channelId: string, text: string, setText: (text: string) => void, input: RefObject<HTMLTextAreaElement | null>) {
  const candidates = useCandidates(channelId)
  const [caret, setCaret] = useState(0)
  const [active, setActive] = useState(0)
  const [dismissed, setDismissed] = useState<string | null>(null)
  const typing = TYPING_RE.exec(text.slice(0, caret))
  const query = typing ? typing[1]!.toLowerCase() : null
  const matches = useMemo(() => {
    if (query === null) return []
    return candidates.filter((c) => c.handle.startsWith(query) || c.name.toLowerCase().startsWith(query)).slice(0, MAX_SUGGESTIONS)
  }, [candidates, query])
  const open = query !== null && matches.length > 0 && dismissed !== `${caret}:${query}`
  const listId = `mention-suggestions-${channelId}`
  const current = Math.min(active, matches.length - 1)

  const pick = (candidate: Candidate) => {
    const start = caret - (query?.length ?? 0) - 1
    const inserted = `@${candidate.handle} `
    setText(text.slice(0, start) + inserted + text.slice(caret))
    const at = start + inserted.length
    setCaret(at)
    setActive(0)
    requestAnimationFrame(() => input.current?.setSelectionRange(at, at))
  }

  /** Handles the key if the list is open; true when it did. */
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>): boolean => {
    if (!open) return false
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault()
      setActive((current + (event.key === 'ArrowDown' ? 1 : matches.length - 1)) % matches.length)
      return true
    }
    if ((event.key === 'Enter' && !event.shiftKey) || event.key === 'Tab') {
      event.preventDefault()
      pick(matches[current]!)
      return true
    }
    if (event.key === 'Escape') {
      event.preventDefault()
      setDismissed(`${caret}:${query}`)
      return true
    }
    return false
  }

  const inputProps = {
    'aria-autocomplete': 'list' as const,
    'aria-controls': open ? listId : undefined,
    'aria-activedescendant': open ? `${listId}-${current}` : undefined,
    onSelect: (event: { currentTarget: HTMLTextAreaElement }) => setCaret(event.currentTarget.selectionStart),
  }

  const listbox = open ? (
    <ul className="mention-suggestions" id={listId} role="listbox" aria-label="People to mention" data-testid="mention-suggestions">
      {matches.map((c, index) => (
        <li
          key={c.id}
          id={`${listId}-${index}`}
          role="option"
          aria-selected={index === current}
          className={index === current ? 'mention-option active' : 'mention-option'}
          // mousedown, not click: the text box keeps the focus.
          onMouseDown={(event) => {
            event.preventDefault()
            pick(c)
          }}
        >
          <span className="mention-option-handle">@{c.handle}</span>
          <span className="muted small">
            {c.name}
            {c.agent ? ' · agent' : ''}
          </span>
        </li>
      ))}
    </ul>
  ) : null

  return { onKeyDown, inputProps, listbox, onCaret: setCaret }
}
