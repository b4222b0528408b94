// One agent's API keys: masked list, create (the key shown once), revoke.
import { useState, type FormEvent } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { SecretOnce } from '../ui/SecretOnce.tsx'

export function AgentKeys({ agentId, agentName }: { agentId: string; agentName: string }) {
  const queryClient = useQueryClient()
  const path = { id: agentId }
  const keys = useQuery({ queryKey: ['keys', agentId], queryFn: () => unwrap(api.GET('/api/v1/agents/{id}/keys', { params: { path } })) })
  const [name, setName] = useState('')
  const [secret, setSecret] = useState<string | null>(null)
  const create = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/agents/{id}/keys', { params: { path }, body: { name } })),
    onSuccess: (created) => {
      setSecret(created.key)
      setName('')
      void queryClient.invalidateQueries({ queryKey: ['keys', agentId] })
    },
  })
  const revoke = useMutation({
    mutationFn: (keyId: string) => unwrap(api.DELETE('/api/v1/agents/{id}/keys/{key_id}', { params: { path: { id: agentId, key_id: keyId } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['keys', agentId] }),
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (name.trim()) create.mutate()
  }
  return (
    <div className="keys">
      <h3>API keys of {agentName}</h3>
      {secret && <SecretOnce label="API key" value={secret} onDone={() => setSecret(null)} />}
      <ErrorNote error={keys.error} />
      <ul className="plain-list">
        {(keys.data ?? []).map((key) => (
          <li key={key.id} className="key-row">
            <span>{key.name}</span>
            <code>{key.masked_key}</code>
            {key.revoked_at ? (
              <span className="muted small">revoked</span>
            ) : (
              <button
                type="button"
                className="link-button danger small"
                aria-label={`Revoke key ${key.name}`}
                onClick={() => {
                  if (window.confirm(`Revoke the key “${key.name}”? Anything using it stops working at once.`)) revoke.mutate(key.id)
                }}
              >
                Revoke
              </button>
            )}
          </li>
        ))}
        {keys.isSuccess && keys.data.length === 0 && <li className="muted small">No keys yet.</li>}
      </ul>
      <ErrorNote error={revoke.error} />
      <form onSubmit={submit} className="inline-form">
        <label>
          New key name
          <input value={name} maxLength={100} onChange={(e) => setName(e.target.value)} placeholder="e.g. production" />
        </label>
        <button type="submit" className="primary" disabled={create.isPending || !name.trim()}>
          Create key
        </button>
      </form>
      <ErrorNote error={create.error} />
    </div>
  )
}
