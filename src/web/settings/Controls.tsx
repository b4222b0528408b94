// Controls the settings screens share: the agent name field with its rule, the save button with
// its "Saved." confirmation, and a button that asks before doing something that cannot be undone.
import { useId, type ReactNode } from 'react'

export function AgentNameField({ value, onChange, rule }: { value: string; onChange: (value: string) => void; rule: string }) {
  const ruleId = useId()
  return (
    <div className="field">
      <label>
        Name
        <input value={value} required minLength={3} maxLength={100} pattern="[A-Za-z0-9\-]+" autoComplete="off" aria-describedby={ruleId} onChange={(e) => onChange(e.target.value)} />
      </label>
      <p id={ruleId} className="hint">
        {rule}
      </p>
    </div>
  )
}

export function SaveRow({ label, pending, disabled, saved }: { label: string; pending: boolean; disabled: boolean; saved: boolean }) {
  return (
    <div className="row-actions">
      <button type="submit" className="primary" disabled={pending || disabled}>
        {pending ? 'Saving…' : label}
      </button>
      {saved && (
        <span className="saved" role="status">
          Saved.
        </span>
      )}
    </div>
  )
}

/** A button that asks (the browser's own, keyboard-usable dialog) before it acts. */
export function ConfirmButton({
  question,
  onConfirm,
  disabled,
  className,
  label,
  children,
}: {
  question: string
  onConfirm: () => void
  disabled?: boolean
  className?: string
  label?: string
  children: ReactNode
}) {
  return (
    <button
      type="button"
      className={className}
      disabled={disabled}
      aria-label={label}
      onClick={() => {
        if (window.confirm(question)) onConfirm()
      }}
    >
      {children}
    </button>
  )
}
