export const MIN_PASSWORD = 12

/** The password rule, updated as the person types and announced politely. */
export function PasswordRule({ password }: { password: string }) {
  const ok = password.length >= MIN_PASSWORD
  const left = MIN_PASSWORD - password.length
  return (
    <p id="password-rule" className={ok ? 'rule rule-ok' : 'rule'} aria-live="polite">
      <span aria-hidden="true">{ok ? '✓' : '•'}</span> At least {MIN_PASSWORD} characters
      {ok ? '' : password.length > 0 ? ` (${left} more)` : ''}
    </p>
  )
}
