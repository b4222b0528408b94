import { useState } from 'react'

/** A secret shown once, with a copy button and the warning that it will not be shown again. */
export function SecretOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false)
  return (
    <div className="secret-once" role="region" aria-label={label}>
      <p className="secret-warning">
        <strong>Copy this {label} now.</strong> It is shown only once and cannot be retrieved again.
      </p>
      <code data-testid="secret">{value}</code>
      <div className="row-actions">
        <button
          type="button"
          onClick={() => {
            void navigator.clipboard?.writeText(value).then(() => setCopied(true), () => setCopied(false))
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" className="primary" onClick={onDone}>
          I have saved it
        </button>
      </div>
    </div>
  )
}
