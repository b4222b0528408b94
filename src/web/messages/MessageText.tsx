// A message's text, formatted (Markdown.tsx), with its mentions marked: each `@name` that names a member the message
// mentions is a highlighted span, and a mention of the signed-in person stands out more. The
// tokens are found by the server's own rules (src/lib/mentions.ts); a token is marked only when
// the message's `mentions` holds someone with that handle, so a name that did not resolve (a
// non-member, an ambiguous handle) stays plain text.
import { useMemo, type ReactNode } from 'react'
import { handleOf, mentionTokens } from '../../lib/mentions.ts'
import { useSignedInSession } from '../api/session.ts'
import { useDirectory } from '../people/queries.ts'
import { parseMarkdown, renderMarkdown } from './Markdown.tsx'
import type { Message } from './types.ts'

/** Handle → id of the people a message mentions (from the workspace directory). */
function useMentionedHandles(mentions: readonly string[]): Map<string, string> {
  const directory = useDirectory()
  return useMemo(() => {
    const out = new Map<string, string>()
    if (!mentions.length) return out
    const ids = new Set(mentions)
    for (const person of directory.data ?? []) {
      if (!ids.has(person.id)) continue
      out.set(handleOf({ id: person.id, type: person.type, name: person.type === 'AGENT' ? (person.handle ?? person.name) : person.name }), person.id)
    }
    return out
  }, [directory.data, mentions])
}

export function MessageText({ message, className = 'message-text' }: { message: Pick<Message, 'text' | 'mentions'>; className?: string }) {
  const session = useSignedInSession()
  const mentions = message.mentions ?? []
  const handles = useMentionedHandles(mentions)
  const tokens = useMemo(() => parseMarkdown(message.text), [message.text])
  const content = useMemo(() => {
    const marked = (text: string, key: string): ReactNode => {
      if (!handles.size) return text
      const out: ReactNode[] = []
      let at = 0
      for (const token of mentionTokens(text)) {
        const id = handles.get(token.handle)
        if (!id) continue
        out.push(text.slice(at, token.index))
        const me = id === session.user_id
        out.push(
          <span key={`${key}@${token.index}`} className={me ? 'mention mention-me' : 'mention'} data-testid={me ? 'mention-me' : 'mention'}>
            {text.slice(token.index, token.index + token.length)}
          </span>,
        )
        at = token.index + token.length
      }
      if (at === 0) return text
      out.push(text.slice(at))
      return out
    }
    return renderMarkdown(tokens, marked)
  }, [handles, tokens, session.user_id])
  return <div className={className}>{content}</div>
}
