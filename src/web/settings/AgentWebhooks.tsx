// One agent's webhooks: add one (URL and events; the signing secret shown once), and for each:
// its state (with why it is off), turn off/on, new signing secret, delivery history, delete.
import { useState, type FormEvent } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { SecretOnce } from '../ui/SecretOnce.tsx'
import { DeliveryHistory } from './DeliveryHistory.tsx'
import { EndpointNotice, StatusPill } from './EndpointStatus.tsx'
import { EventPicker } from './EventPicker.tsx'
import { eventLabel, WEBHOOK_EVENTS, type WebhookEvent } from './format.ts'
import { ConfirmButton } from './Controls.tsx'
import { Empty, LoadFailed, Loading } from './QueryState.tsx'
import { createWebhook, deleteWebhook, fetchWebhookDeliveries, redeliverWebhook, rotateWebhookSecret, setWebhookActive, settingsKeys, useWebhooks, type Webhook } from './queries.ts'

const URL_SENTENCES = {
  INVALID_URL: 'That address cannot receive webhooks: use a public http:// or https:// URL (private and local network addresses are refused).',
}

function NewWebhook({ agentId, onCreated }: { agentId: string; onCreated: (secret: string) => void }) {
  const queryClient = useQueryClient()
  const [url, setUrl] = useState('')
  const [events, setEvents] = useState<WebhookEvent[]>(['message.created'])
  const create = useMutation({
    mutationFn: () => createWebhook(agentId, { url: url.trim(), events }),
    onSuccess: (created) => {
      setUrl('')
      setEvents(['message.created'])
      onCreated(created.secret)
      void queryClient.invalidateQueries({ queryKey: settingsKeys.webhooks(agentId) })
    },
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (url.trim() && events.length) create.mutate()
  }
  return (
    <form className="subcard stack" onSubmit={submit} aria-labelledby="new-webhook-title">
      <h4 id="new-webhook-title">Add a webhook</h4>
      <label>
        Webhook URL
        <input type="url" value={url} required maxLength={2048} placeholder="https://example.com/hooks/agent" autoComplete="off" onChange={(e) => setUrl(e.target.value)} />
      </label>
      <EventPicker legend="Send these events" events={WEBHOOK_EVENTS} value={events} onChange={setEvents} />
      <ErrorNote error={create.error} sentences={URL_SENTENCES} />
      <div>
        <button type="submit" className="primary" disabled={create.isPending || !url.trim() || events.length === 0}>
          {create.isPending ? 'Adding…' : 'Add webhook'}
        </button>
      </div>
    </form>
  )
}

function WebhookItem({ agentId, webhook, onSecret }: { agentId: string; webhook: Webhook; onSecret: (secret: string) => void }) {
  const queryClient = useQueryClient()
  const [history, setHistory] = useState(false)
  const path = { id: agentId, webhook_id: webhook.id }
  const refresh = () => queryClient.invalidateQueries({ queryKey: settingsKeys.webhooks(agentId) })
  const toggle = useMutation({
    mutationFn: (active: boolean) => setWebhookActive(path, active),
    onSuccess: refresh,
  })
  const rotate = useMutation({
    mutationFn: () => rotateWebhookSecret(path),
    onSuccess: (rotated) => onSecret(rotated.secret),
  })
  const remove = useMutation({
    mutationFn: () => deleteWebhook(path),
    onSuccess: refresh,
  })
  return (
    <li className="endpoint" data-testid="webhook">
      <div className="endpoint-head">
        <code className="endpoint-url">{webhook.url}</code>
        <StatusPill state={webhook} />
      </div>
      <p className="small">
        <span className="muted">Events: </span>
        {webhook.events.map(eventLabel).join(' · ')}
      </p>
      <EndpointNotice state={webhook} kind="webhook" onEnable={() => toggle.mutate(true)} enabling={toggle.isPending} />
      <div className="row-actions">
        <button type="button" aria-expanded={history} onClick={() => setHistory(!history)}>
          {history ? 'Hide deliveries' : 'Deliveries'}
        </button>
        {webhook.active && (
          <button type="button" disabled={toggle.isPending} onClick={() => toggle.mutate(false)}>
            Turn off
          </button>
        )}
        <ConfirmButton disabled={rotate.isPending} question="Make a new signing secret? Signatures made with the current one stop matching at once." onConfirm={() => rotate.mutate()}>
          New signing secret
        </ConfirmButton>
        <ConfirmButton
          className="danger-outline"
          disabled={remove.isPending}
          label={`Delete the webhook ${webhook.url}`}
          question={`Delete the webhook to ${webhook.url}? Its delivery history goes with it.`}
          onConfirm={() => remove.mutate()}
        >
          Delete
        </ConfirmButton>
      </div>
      <ErrorNote error={toggle.error ?? rotate.error ?? remove.error} />
      {history && (
        <DeliveryHistory
          kind="webhook"
          active={webhook.active}
          queryKey={settingsKeys.webhookDeliveries(webhook.id)}
          fetchPage={(before, status) => fetchWebhookDeliveries(path, before, status)}
          redeliver={(deliveryId) => redeliverWebhook(path, deliveryId)}
        />
      )}
    </li>
  )
}

export function AgentWebhooks({ agentId, agentName }: { agentId: string; agentName: string }) {
  const webhooks = useWebhooks(agentId)
  const [secret, setSecret] = useState<string | null>(null)
  return (
    <div className="stack">
      <div>
        <h3>Webhooks of {agentName}</h3>
        <p className="muted small">Events in the channels this agent belongs to are POSTed to these addresses, signed with HMAC-SHA256 in the X-Webhook-Signature header.</p>
      </div>
      {secret && <SecretOnce key={secret} label="signing secret" value={secret} note="Your receiver checks each delivery's signature with it." onDone={() => setSecret(null)} />}
      {webhooks.isPending && <Loading what="webhooks" />}
      {webhooks.isError && <LoadFailed what="the webhooks" error={webhooks.error} retry={() => void webhooks.refetch()} />}
      {webhooks.isSuccess && webhooks.data.length === 0 && <Empty>No webhooks yet. Add one below to have events sent to your server.</Empty>}
      {webhooks.isSuccess && webhooks.data.length > 0 && (
        <ul className="plain-list endpoint-list">
          {webhooks.data.map((webhook) => (
            <WebhookItem key={webhook.id} agentId={agentId} webhook={webhook} onSecret={setSecret} />
          ))}
        </ul>
      )}
      <NewWebhook agentId={agentId} onCreated={setSecret} />
    </div>
  )
}
