// "Ada is typing…" above the composer, from the socket's typing frames (src/web/live/typing.ts).
import { useTyping } from '../live/typing.ts'

export function typingSentence(names: string[]): string {
  if (names.length === 0) return ''
  if (names.length === 1) return `${names[0]} is typing…`
  if (names.length === 2) return `${names[0]} and ${names[1]} are typing…`
  return 'Several people are typing…'
}

export function TypingLine({ channelId }: { channelId: string }) {
  const names = useTyping(channelId)
  // Always rendered, so the composer does not jump and screen readers hear the change politely.
  return (
    <p className="typing-line muted small" aria-live="polite" data-testid="typing-line">
      {typingSentence(names)}
    </p>
  )
}
