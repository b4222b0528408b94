import { sentenceFor } from '../api/errors.ts'

/** A failure in words, announced to screen readers; `sentences` says more for codes the screen knows. */
export function ErrorNote({ error, sentences }: { error: unknown; sentences?: Partial<Record<string, string>> }) {
  if (!error) return null
  return (
    <p className="error-note" role="alert">
      {sentenceFor(error, sentences)}
    </p>
  )
}
