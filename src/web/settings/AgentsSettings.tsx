// The agents of the workspace: create one (then manage it on its own page), and the list.
import { useState, type FormEvent } from 'react'
import { Link, useLocation } from 'wouter'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { AgentBadge } from '../ui/AgentBadge.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { AgentNameField } from './Controls.tsx'
import { Empty, LoadFailed, Loading } from './QueryState.tsx'
import { createAgent, settingsKeys, useAgents } from './queries.ts'

function NewAgent() {
  const queryClient = useQueryClient()
  const [, navigate] = useLocation()
  const [name, setName] = useState('')
  const [displayName, setDisplayName] = useState('')
  const [description, setDescription] = useState('')
  const create = useMutation({
    mutationFn: () =>
      createAgent({
        name: name.trim(),
        ...(displayName.trim() ? { display_name: displayName.trim() } : {}),
        ...(description.trim() ? { description: description.trim() } : {}),
      }),
    onSuccess: (agent) => {
      queryClient.setQueryData(settingsKeys.agent(agent.id), agent)
      void queryClient.invalidateQueries({ queryKey: settingsKeys.agents })
      navigate(`/agents/${agent.id}`)
    },
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate()
  }
  return (
    <form onSubmit={submit} className="card stack" aria-labelledby="new-agent-title">
      <h3 id="new-agent-title">New agent</h3>
      <div className="form-grid">
        <AgentNameField value={name} onChange={setName} rule="Letters, digits and hyphens, 3 to 100 characters; unique in the workspace." />
        <div className="field">
          <label>
            Display name (optional)
            <input value={displayName} maxLength={255} autoComplete="off" aria-describedby="agent-display-rule" onChange={(e) => setDisplayName(e.target.value)} />
          </label>
          <p id="agent-display-rule" className="hint">
            What people see next to its messages. Defaults to the name.
          </p>
        </div>
      </div>
      <label>
        Description (optional)
        <input value={description} maxLength={2000} onChange={(e) => setDescription(e.target.value)} />
      </label>
      <ErrorNote error={create.error} sentences={{ NAME_TAKEN: 'An agent with that name already exists (names ignore case). Choose another name.' }} />
      <div>
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create agent'}
        </button>
      </div>
    </form>
  )
}

export function AgentsSettings() {
  const agents = useAgents()
  return (
    <div className="settings-section">
      <div className="section-intro">
        <h2>Agents</h2>
        <p className="muted">Agents post and read with their own API keys, and can receive events at their webhooks.</p>
      </div>
      <NewAgent />
      <section className="card" aria-labelledby="agent-list-title">
        <h3 id="agent-list-title">All agents{agents.data ? ` (${agents.data.length})` : ''}</h3>
        {agents.isPending && <Loading what="agents" />}
        {agents.isError && <LoadFailed what="the agents" error={agents.error} retry={() => void agents.refetch()} />}
        {agents.isSuccess && agents.data.length === 0 && <Empty>No agents yet. Create the first one above.</Empty>}
        {agents.isSuccess && agents.data.length > 0 && (
          <ul className="plain-list divided">
            {agents.data.map((agent) => (
              <li key={agent.id} className="agent-item">
                <div className="agent-row">
                  <span className="author">{agent.display_name}</span>
                  <AgentBadge />
                  <span className="muted small">@{agent.name}</span>
                  {agent.is_primary && <span className="tag">Primary</span>}
                  <Link href={`/agents/${agent.id}`} className="manage-link" aria-label={`Manage ${agent.display_name}`}>
                    Manage
                  </Link>
                </div>
                {agent.description && <p className="muted small clamp">{agent.description}</p>}
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  )
}
