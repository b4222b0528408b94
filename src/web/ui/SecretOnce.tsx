import { useEffect, useId, useRef, useState } from 'react'

interface Secret {
  label: string
  value: string
}

function SecretValue({ secret }: { secret: Secret }) {
  const [copied, setCopied] = useState<boolean | null>(null)
  const id = useId()
  return (
    <div className="secret-value">
      <span id={id} className="secret-label">
        {secret.label.charAt(0).toUpperCase() + secret.label.slice(1)}
      </span>
      <code data-testid="secret" aria-labelledby={id}>
        {secret.value}
      </code>
      <button
        type="button"
        aria-label={`${copied ? 'Copied' : 'Copy'} the ${secret.label}`}
        onClick={() => {
          void navigator.clipboard?.writeText(secret.value).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }}
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
      {copied === false && (
        <span className="error-note small" role="alert">
          Copying is blocked here: select the text and copy it by hand.
        </span>
      )}
    </div>
  )
}

/**
 * Secrets shown once (an API key, an HMAC secret…), each with a copy button, and the warning
 * that they will not be shown again. `label` names the region; `secrets` defaults to one secret
 * called `label` with `value`.
 */
export function SecretOnce({ label, value, secrets, note, onDone }: { label: string; value?: string; secrets?: Secret[]; note?: string; onDone: () => void }) {
  const list = secrets ?? [{ label, value: value ?? '' }]
  const many = list.length > 1
  // Brought into view and focus when it appears, wherever the action that made it was.
  const region = useRef<HTMLDivElement>(null)
  useEffect(() => region.current?.focus(), [])
  return (
    <div className="secret-once" role="region" aria-label={label} tabIndex={-1} ref={region}>
      <p className="secret-warning">
        <strong>Copy {many ? 'these now' : `this ${label} now`}.</strong> {many ? 'They are' : 'It is'} shown only once and cannot be retrieved again.
        {note ? ` ${note}` : ''}
      </p>
      {list.map((secret) => (
        <SecretValue key={secret.label} secret={secret} />
      ))}
      <div className="row-actions">
        <button type="button" className="primary" onClick={onDone}>
          {many ? 'I have saved them' : 'I have saved it'}
        </button>
      </div>
    </div>
  )
}
