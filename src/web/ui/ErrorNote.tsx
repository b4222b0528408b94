import { sentenceFor } from '../api/errors.ts'

/** A failure in words, announced to screen readers. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null
  return (
    <p className="error-note" role="alert">
      {sentenceFor(error)}
    </p>
  )
}
