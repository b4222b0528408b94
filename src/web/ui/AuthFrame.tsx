import type { ReactNode } from 'react'

/** The centred card of the sign-in and invite pages. */
export function AuthFrame({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="auth-frame">
      <div className="auth-card">
        <p className="brand" aria-hidden="true">
          <span className="brand-mark" /> Agent Messaging
        </p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  )
}
