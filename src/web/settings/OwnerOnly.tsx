// What a person who is not the workspace owner sees at any /settings address: no settings, and
// why. The API refuses them anyway (403); this page only saves them the attempt.
import { Link } from 'wouter'

export function OwnerOnly() {
  return (
    <section className="settings" aria-labelledby="owner-only-title">
      <div className="owner-only">
        <h1 id="owner-only-title">Only the workspace owner can open settings</h1>
        <p>Only the workspace owner manages agents, their API keys and webhooks, integrations, people and invites, and the workspace&apos;s limits.</p>
        <p>If you need a change, ask the owner of this workspace.</p>
        <p>
          <Link href="~/">Back to your conversations</Link>
        </p>
      </div>
    </section>
  )
}
