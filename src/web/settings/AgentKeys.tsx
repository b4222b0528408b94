// One agent's API keys: masked list, create (the key shown once), revoke.
import { useState, type FormEvent } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { SecretOnce } from '../ui/SecretOnce.tsx'
import { formatDay } from './format.ts'
import { ConfirmButton } from './Controls.tsx'
import { Empty, LoadFailed, Loading } from './QueryState.tsx'
import { createAgentKey, revokeAgentKey, settingsKeys, useAgentKeys } from './queries.ts'

export function AgentKeys({ agentId, agentName }: { agentId: string; agentName: string }) {
  const queryClient = useQueryClient()
  const keys = useAgentKeys(agentId)
  const [name, setName] = useState('')
  const [secret, setSecret] = useState<string | null>(null)
  const create = useMutation({
    mutationFn: () => createAgentKey(agentId, name.trim()),
    onSuccess: (created) => {
      setSecret(created.key)
      setName('')
      void queryClient.invalidateQueries({ queryKey: settingsKeys.keys(agentId) })
    },
  })
  const revoke = useMutation({
    mutationFn: (keyId: string) => revokeAgentKey(agentId, keyId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: settingsKeys.keys(agentId) }),
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (name.trim()) create.mutate()
  }
  return (
    <div className="stack">
      <div>
        <h3>API keys of {agentName}</h3>
        <p className="muted small">The agent authenticates with one of these (Authorization: Bearer svc_…). Revoking a key locks it out at once.</p>
      </div>
      {secret && <SecretOnce key={secret} label="API key" value={secret} onDone={() => setSecret(null)} />}
      {keys.isPending && <Loading what="keys" />}
      {keys.isError && <LoadFailed what="the keys" error={keys.error} retry={() => void keys.refetch()} />}
      {keys.isSuccess && keys.data.length === 0 && <Empty>No keys yet: this agent cannot sign in until you create one.</Empty>}
      {keys.isSuccess && keys.data.length > 0 && (
        <ul className="plain-list divided">
          {keys.data.map((key) => (
            <li key={key.id} className={key.revoked_at ? 'key-row revoked' : 'key-row'}>
              <span className="key-name">{key.name}</span>
              <code>{key.masked_key}</code>
              <span className="muted small">{key.revoked_at ? `revoked ${formatDay(key.revoked_at)}` : `created ${formatDay(key.created_at)}`}</span>
              {!key.revoked_at && (
                <ConfirmButton
                  className="link-button danger small push-end"
                  label={`Revoke key ${key.name}`}
                  disabled={revoke.isPending && revoke.variables === key.id}
                  question={`Revoke the key “${key.name}”? Anything using it stops working at once.`}
                  onConfirm={() => revoke.mutate(key.id)}
                >
                  Revoke
                </ConfirmButton>
              )}
            </li>
          ))}
        </ul>
      )}
      <ErrorNote error={revoke.error} />
      <form onSubmit={submit} className="inline-form">
        <label>
          New key name
          <input value={name} maxLength={100} onChange={(e) => setName(e.target.value)} placeholder="e.g. production" />
        </label>
        <button type="submit" className="primary" disabled={create.isPending || !name.trim()}>
          {create.isPending ? 'Creating…' : 'Create key'}
        </button>
      </form>
      <ErrorNote error={create.error} />
    </div>
  )
}
