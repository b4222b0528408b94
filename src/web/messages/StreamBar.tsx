// A streaming message (issue 25): its agent's status and steps, "stopping…" once someone pressed
// Stop, and the Stop button for people who can read the conversation. The text itself grows in
// place (message_delta frames, src/web/live/streams.ts) with a blinking cursor (MessageText's
// sibling below). A late joiner or a reload reads the status with GET …/stream.
import { useMutation } from '@tanstack/react-query'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import type { StreamStatus } from '../live/streams.ts'
import { stopStream, useStreamView } from './queries.ts'
import type { Message } from './types.ts'

const STEP_MARK = { pending: '○', in_progress: '◐', complete: '✓', error: '✗' } as const
const STEP_WORDS = { pending: 'to do', in_progress: 'in progress', complete: 'done', error: 'failed' } as const

/** Everyone signed in here is a person who can read the conversation, so everyone may press Stop (observers too). */
export function StreamBar({ message }: { message: Message }) {
  const view = useStreamView(message)
  const stop = useMutation({ mutationFn: () => stopStream(message) })
  const status = view.data?.status ?? null
  const stopping = view.data?.stopRequested || stop.isSuccess
  return (
    <div className="stream-bar" data-testid="stream-bar">
      {status && <StatusView status={status} />}
      {stopping ? (
        <span className="muted small" data-testid="stream-stopping">
          stopping…
        </span>
      ) : (
        <button type="button" className="danger-button stream-stop" onClick={() => stop.mutate()} disabled={stop.isPending} aria-label={`Stop ${message.author_name}'s reply`}>
          Stop
        </button>
      )}
      <ErrorNote error={stop.error} />
    </div>
  )
}

/** An agent's status: its title and its steps (each step's state also in words for screen readers). */
export function StatusView({ status, who }: { status: StreamStatus; who?: string }) {
  return (
    <div className="stream-status" role="status" aria-live="polite">
      <span className="stream-title">
        {who && <span className="stream-who">{who}: </span>}
        {status.title}
      </span>
      {status.steps.length > 0 && (
        <ol className="stream-steps">
          {status.steps.map((step, i) => (
            <li key={i} data-state={step.state}>
              <span aria-hidden="true">{STEP_MARK[step.state]}</span> {step.title}
              <span className="visually-hidden"> ({STEP_WORDS[step.state]})</span>
            </li>
          ))}
        </ol>
      )}
    </div>
  )
}
