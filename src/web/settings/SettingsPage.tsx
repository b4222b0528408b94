// Workspace settings, for the owner only (the API refuses everyone else anyway): agents and
// their API keys.
import { useState, type FormEvent } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'
import type { Session } from '../api/session.ts'
import { AgentBadge } from '../ui/AgentBadge.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { AgentKeys } from './AgentKeys.tsx'

export function SettingsPage({ session }: { session: Session }) {
  const queryClient = useQueryClient()
  const agents = useQuery({ queryKey: ['agents'], queryFn: () => unwrap(api.GET('/api/v1/agents')), enabled: session.is_owner })
  const [open, setOpen] = useState<string | null>(null)
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const create = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/agents', { body: { name, ...(description.trim() ? { description: description.trim() } : {}) } })),
    onSuccess: (agent) => {
      setName('')
      setDescription('')
      setOpen(agent.id)
      void queryClient.invalidateQueries({ queryKey: ['agents'] })
    },
  })
  if (!session.is_owner) {
    return (
      <section className="settings pad">
        <h1>Settings</h1>
        <p>Only the workspace owner manages agents, keys and integrations. Ask them if you need a change.</p>
      </section>
    )
  }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate()
  }
  return (
    <section className="settings" aria-labelledby="settings-title">
      <header className="channel-header">
        <h1 id="settings-title">Agents</h1>
        <p className="channel-topic">Create agents and give them API keys.</p>
      </header>
      <div className="settings-body">
        <form onSubmit={submit} className="card stack">
          <h2>New agent</h2>
          <label>
            Name
            <input value={name} required minLength={3} maxLength={100} pattern="[A-Za-z0-9\-]+" aria-describedby="agent-name-rule" onChange={(e) => setName(e.target.value)} />
          </label>
          <p id="agent-name-rule" className="muted small">
            Letters, digits and hyphens, 3 to 100 characters.
          </p>
          <label>
            Description (optional)
            <input value={description} maxLength={2000} onChange={(e) => setDescription(e.target.value)} />
          </label>
          <ErrorNote error={create.error} />
          <button type="submit" className="primary" disabled={create.isPending}>
            Create agent
          </button>
        </form>
        <ErrorNote error={agents.error} />
        <ul className="plain-list agent-list">
          {(agents.data ?? []).map((agent) => (
            <li key={agent.id} className="card">
              <div className="agent-row">
                <span className="author">{agent.display_name}</span>
                <AgentBadge />
                <span className="muted small">{agent.name}</span>
                <button type="button" className="link-button" aria-expanded={open === agent.id} onClick={() => setOpen(open === agent.id ? null : agent.id)}>
                  {open === agent.id ? 'Hide keys' : 'API keys'}
                </button>
              </div>
              {agent.description && <p className="muted">{agent.description}</p>}
              {open === agent.id && <AgentKeys agentId={agent.id} agentName={agent.display_name} />}
            </li>
          ))}
        </ul>
      </div>
    </section>
  )
}
