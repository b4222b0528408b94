// One message: author (with the AGENT badge for agents), time, text, attachment, and edit and
// delete for whoever may.
import { useEffect, useRef, useState, type KeyboardEvent } from 'react'
import { useMutation } from '@tanstack/react-query'
import { useSignedInSession } from '../api/session.ts'
import { AgentBadge } from '../ui/AgentBadge.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { ApprovalCard } from './ApprovalCard.tsx'
import { Attachment } from './Attachment.tsx'
import { Reactions } from './Reactions.tsx'
import { formatFull, formatTime } from './format.ts'
import { MessageText } from './MessageText.tsx'
import { deleteMessage, editMessage } from './queries.ts'
import { StreamBar } from './StreamBar.tsx'
import { ThreadStatusBar } from './ThreadStatusBar.tsx'
import { ThreadSummary } from './ThreadSummary.tsx'
import { useInThreadPanel } from './threads.ts'
import type { Message } from './types.ts'

export function MessageItem({ message, highlighted = false }: { message: Message; highlighted?: boolean }) {
  const session = useSignedInSession()
  const mine = message.author_id === session.user_id
  const inPanel = useInThreadPanel()
  // A pending approval request is not edited (the server refuses it: 409).
  const canDelete = mine || session.role === 'admin'
  const [editing, setEditing] = useState(false)
  const [draft, setDraft] = useState(message.text)
  // Leaving the editor (saved or Escape) puts the focus back on its Edit button, not on the page.
  const editButton = useRef<HTMLButtonElement>(null)
  const wasEditing = useRef(false)
  useEffect(() => {
    if (wasEditing.current && !editing) editButton.current?.focus()
    wasEditing.current = editing
  }, [editing])
  const edit = useMutation({
    mutationFn: (text: string) => editMessage(message, text),
    onSuccess: () => setEditing(false),
  })
  const remove = useMutation({
    mutationFn: () => deleteMessage(message),
  })
  const onEditKey = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Escape') {
      setEditing(false)
      setDraft(message.text)
    } else if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault()
      if (draft.trim()) edit.mutate(draft)
    }
  }
  const agent = message.author_type === 'AGENT'
  return (
    <article
      className={`message${agent ? ' from-agent' : ''}${highlighted ? ' highlighted' : ''}`}
      data-testid="message"
      data-author-type={message.author_type}
      data-highlighted={highlighted || undefined}
      // The message jumped to takes the focus, so the keyboard and screen readers start there.
      tabIndex={highlighted ? -1 : undefined}
      aria-label={`${message.author_name}${agent ? ' (agent)' : ''}${highlighted ? ', the message you searched for' : ''}`}
    >
      <header className="message-head">
        <span className="author">{message.author_name}</span>
        {agent && <AgentBadge />}
        <time dateTime={message.created_at} title={formatFull(message.created_at)} className="muted small">
          {formatTime(message.created_at)}
        </time>
        {message.edited_at && <span className="muted small">(edited)</span>}
        {(mine || canDelete) && !editing && (
          <span className="message-actions">
            {mine && message.approval?.status !== 'pending' && (
              <button type="button" ref={editButton} className="link-button small" onClick={() => setEditing(true)} aria-label="Edit message">
                Edit
              </button>
            )}
            {canDelete && (
              <button
                type="button"
                className="link-button small danger"
                aria-label="Delete message"
                disabled={remove.isPending}
                onClick={() => {
                  if (window.confirm('Delete this message? This cannot be undone.')) remove.mutate()
                }}
              >
                Delete
              </button>
            )}
          </span>
        )}
      </header>
      {editing ? (
        <div className="edit-box">
          <label className="visually-hidden" htmlFor={`edit-${message.id}`}>
            Edit message
          </label>
          <textarea id={`edit-${message.id}`} value={draft} autoFocus rows={2} onChange={(e) => setDraft(e.target.value)} onKeyDown={onEditKey} />
          <p className="muted small">Enter to save · Escape to cancel</p>
          <ErrorNote error={edit.error} />
        </div>
      ) : (
        message.text && <MessageText message={message} />
      )}
      {message.stream_state === 'streaming' && (
        <>
          <span className="stream-cursor" aria-hidden="true" data-testid="stream-cursor" />
          <StreamBar message={message} />
        </>
      )}
      {(message.stream_state === 'cancelled' || message.stream_state === 'interrupted') && (
        <p className="muted small">({message.stream_state === 'cancelled' ? 'stopped by its agent' : 'interrupted'})</p>
      )}
      {message.attachment && <Attachment attachment={message.attachment} />}
      {message.approval && <ApprovalCard message={message} />}
      <Reactions message={message} />
      {/* The panel shows its thread's statuses after the replies (ThreadPanel). */}
      {!message.thread_id && !inPanel && <ThreadStatusBar channelId={message.channel_id} rootId={message.id} read={false} />}
      <ThreadSummary message={message} />
      <ErrorNote error={remove.error} />
    </article>
  )
}
