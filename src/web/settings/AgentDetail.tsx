// One agent: its profile (edit), API keys, webhooks, and deleting it.
import { useState, type FormEvent } from 'react'
import { Link, useLocation } from 'wouter'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { ApiError } from '../api/errors.ts'
import { AgentBadge } from '../ui/AgentBadge.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { AgentKeys } from './AgentKeys.tsx'
import { AgentWebhooks } from './AgentWebhooks.tsx'
import { AgentNameField, ConfirmButton, SaveRow } from './Controls.tsx'
import { formatDay } from './format.ts'
import { LoadFailed, Loading } from './QueryState.tsx'
import { deleteAgent, settingsKeys, updateAgent, useAgent, type Agent } from './queries.ts'

function Profile({ agent }: { agent: Agent }) {
  const queryClient = useQueryClient()
  const [name, setName] = useState(agent.name)
  const [displayName, setDisplayName] = useState(agent.display_name)
  const [description, setDescription] = useState(agent.description ?? '')
  const [saved, setSaved] = useState(false)
  const changes = {
    ...(name.trim() !== agent.name ? { name: name.trim() } : {}),
    ...(displayName.trim() !== agent.display_name ? { display_name: displayName.trim() } : {}),
    ...(description.trim() !== (agent.description ?? '') ? { description: description.trim() || null } : {}),
  }
  const dirty = Object.keys(changes).length > 0
  const save = useMutation({
    mutationFn: () => updateAgent(agent.id, changes),
    onSuccess: (updated) => {
      queryClient.setQueryData(settingsKeys.agent(agent.id), updated)
      void queryClient.invalidateQueries({ queryKey: settingsKeys.agents })
      setSaved(true)
    },
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    setSaved(false)
    if (dirty) save.mutate()
  }
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="profile-title">
      <h3 id="profile-title">Profile</h3>
      <div className="form-grid">
        <AgentNameField
          value={name}
          onChange={(value) => {
            setName(value)
            setSaved(false)
          }}
          rule="Letters, digits and hyphens, 3 to 100 characters."
        />
        <label>
          Display name
          <input
            value={displayName}
            required
            maxLength={255}
            autoComplete="off"
            onChange={(e) => {
              setDisplayName(e.target.value)
              setSaved(false)
            }}
          />
        </label>
      </div>
      <label>
        Description
        <textarea
          value={description}
          maxLength={2000}
          rows={2}
          onChange={(e) => {
            setDescription(e.target.value)
            setSaved(false)
          }}
        />
      </label>
      <ErrorNote error={save.error} sentences={{ NAME_TAKEN: 'Another agent already has that name (names ignore case). Choose another one.' }} />
      <SaveRow label="Save changes" pending={save.isPending} disabled={!dirty} saved={saved && !dirty} />
    </form>
  )
}

function DeleteAgent({ agent }: { agent: Agent }) {
  const queryClient = useQueryClient()
  const [, navigate] = useLocation()
  const remove = useMutation({
    mutationFn: () => deleteAgent(agent.id),
    onSuccess: () => {
      queryClient.removeQueries({ queryKey: settingsKeys.agent(agent.id) })
      void queryClient.invalidateQueries({ queryKey: settingsKeys.agents })
      navigate('/agents')
    },
  })
  return (
    <section className="card danger-zone stack" aria-labelledby="delete-agent-title">
      <h3 id="delete-agent-title">Delete this agent</h3>
      {agent.is_primary ? (
        <p className="muted">This is the primary agent, the workspace&apos;s own admin agent created at setup. It cannot be deleted.</p>
      ) : (
        <>
          <p className="muted">Its API keys and webhooks stop working at once. Messages it already posted stay in their channels.</p>
          <ErrorNote error={remove.error} sentences={{ FORBIDDEN: 'The primary agent cannot be deleted.' }} />
          <div>
            <ConfirmButton
              className="danger-button"
              disabled={remove.isPending}
              question={`Delete the agent “${agent.display_name}”? Its keys and webhooks stop working at once. This cannot be undone.`}
              onConfirm={() => remove.mutate()}
            >
              {remove.isPending ? 'Deleting…' : `Delete ${agent.display_name}`}
            </ConfirmButton>
          </div>
        </>
      )}
    </section>
  )
}

export function AgentDetail({ agentId }: { agentId: string }) {
  const agent = useAgent(agentId)
  const back = (
    <Link href="/agents" className="back-link">
      <span aria-hidden="true">←</span> All agents
    </Link>
  )
  if (agent.isPending) {
    return (
      <div className="settings-section">
        {back}
        <Loading what="the agent" />
      </div>
    )
  }
  if (agent.isError) {
    const gone = agent.error instanceof ApiError && (agent.error.status === 404 || agent.error.status === 400)
    return (
      <div className="settings-section">
        {back}
        {gone ? (
          <div className="empty-state">
            <h2>This agent does not exist</h2>
            <p>It may have been deleted. Pick one from the list of agents.</p>
          </div>
        ) : (
          <LoadFailed what="the agent" error={agent.error} retry={() => void agent.refetch()} />
        )}
      </div>
    )
  }
  const a = agent.data
  return (
    <div className="settings-section">
      {back}
      <div className="section-intro">
        <h2 className="agent-title">
          {a.display_name} <AgentBadge />
          {a.is_primary && <span className="tag">Primary</span>}
        </h2>
        <p className="muted">
          @{a.name} · created {formatDay(a.created_at)}
        </p>
      </div>
      <Profile key={a.id} agent={a} />
      <section className="card">
        <AgentKeys agentId={a.id} agentName={a.display_name} />
      </section>
      <section className="card">
        <AgentWebhooks agentId={a.id} agentName={a.display_name} />
      </section>
      <DeleteAgent agent={a} />
    </div>
  )
}
