// The states of a list while it loads or when loading failed, worded per screen.
import { ErrorNote } from '../ui/ErrorNote.tsx'

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted loading-line" role="status">
      <span className="spinner" aria-hidden="true" /> Loading {what}…
    </p>
  )
}

/** A failed load in words, with a way to try again. */
export function LoadFailed({ what, error, retry }: { what: string; error: unknown; retry: () => void }) {
  return (
    <div className="load-failed">
      <p>
        <strong>Could not load {what}.</strong>
      </p>
      <ErrorNote error={error} />
      <button type="button" className="secondary" onClick={retry}>
        Try again
      </button>
    </div>
  )
}

/** A list's empty state: what it will hold, and how to fill it. */
export function Empty({ children }: { children: React.ReactNode }) {
  return <p className="empty-list muted">{children}</p>
}
