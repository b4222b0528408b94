// Reaction chips under a message: each emoji with its count, pressed when one reacted with it
// (click to toggle), and a small picker of common emoji. Observers see the chips, not the picker.
import { useState } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useSignedInSession } from '../api/session.ts'
import { setReactions } from '../live/reactions.ts'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { messageKeys, setReaction } from './queries.ts'
import type { Message } from './types.ts'

export const COMMON_EMOJI = ['👍', '👀', '✅', '❤️', '😄', '🎉']
type Reaction = Message['reactions'][number]

/** The reactions after the caller toggles one (what the server will answer, shown at once). */
export function toggled(reactions: Reaction[], emoji: string, on: boolean): Reaction[] {
  const found = reactions.find((r) => r.emoji === emoji)
  if (on) {
    if (found?.reacted) return reactions
    return found ? reactions.map((r) => (r.emoji === emoji ? { ...r, count: r.count + 1, reacted: true } : r)) : [...reactions, { emoji, count: 1, reacted: true }]
  }
  if (!found?.reacted) return reactions
  return reactions.flatMap((r) => (r.emoji !== emoji ? [r] : r.count > 1 ? [{ ...r, count: r.count - 1, reacted: false }] : []))
}

export function Reactions({ message }: { message: Message }) {
  const session = useSignedInSession()
  const queryClient = useQueryClient()
  const [picking, setPicking] = useState(false)
  const canReact = session.role !== 'observer'
  const toggle = useMutation({
    // One message's reaction writes go out one after another, in the order clicked: a quick second
    // click on a chip (add, then take back) sent beside the first could reach the server first,
    // and the server would keep the reaction the chip no longer shows.
    scope: { id: `reactions:${message.id}` },
    mutationFn: ({ emoji, on }: { emoji: string; on: boolean }) => setReaction(message, emoji, on),
    onMutate: ({ emoji, on }) => setReactions(queryClient, message.channel_id, message.id, (list) => toggled(list, emoji, on)),
    onSuccess: (reactions) => {
      if (reactions) setReactions(queryClient, message.channel_id, message.id, () => reactions)
    },
    onError: () => void queryClient.invalidateQueries({ queryKey: messageKeys.channel(message.channel_id) }),
  })
  const react = (emoji: string, on: boolean) => {
    setPicking(false)
    toggle.mutate({ emoji, on })
  }
  if (!message.reactions.length && !canReact) return null
  const bare = !message.reactions.length && !picking
  return (
    // Without reactions the row takes no room: only the add button, floating in the message's
    // corner and shown on hover or focus (a list of messages keeps its height).
    <div className={`reactions${bare ? ' bare' : ''}`} data-testid="reactions">
      {message.reactions.map((r) => (
        <button
          key={r.emoji}
          type="button"
          className={`reaction-chip${r.reacted ? ' reacted' : ''}`}
          aria-pressed={r.reacted}
          aria-label={`${r.emoji} ${r.count} ${r.count === 1 ? 'reaction' : 'reactions'}${r.reacted ? ', including yours' : ''}`}
          disabled={!canReact}
          onClick={() => react(r.emoji, !r.reacted)}
          data-testid="reaction-chip"
        >
          <span aria-hidden="true">{r.emoji}</span> <span className="reaction-count">{r.count}</span>
        </button>
      ))}
      {canReact && (
        <span className="reaction-add">
          {/* Not a Tab stop on a message without reactions: one per message would double the stops in a long history. */}
          <button type="button" className="reaction-chip add" aria-expanded={picking} aria-label="Add reaction" tabIndex={bare ? -1 : undefined} onClick={() => setPicking((p) => !p)}>
            {/* The glyph is drawn by CSS, so a message's text stays its own text. */}
            <span aria-hidden="true" className="reaction-add-glyph" />
          </button>
          {picking && (
            <span className="reaction-picker" role="group" aria-label="Pick a reaction">
              {COMMON_EMOJI.map((emoji) => {
                const mine = message.reactions.some((r) => r.emoji === emoji && r.reacted)
                return (
                  <button key={emoji} type="button" className="reaction-option" aria-pressed={mine} aria-label={`React with ${emoji}`} onClick={() => react(emoji, !mine)}>
                    {emoji}
                  </button>
                )
              })}
            </span>
          )}
        </span>
      )}
      <ErrorNote error={toggle.error} />
    </div>
  )
}
