// Integrations: external agent platforms connected to the workspace. Create one (platform, URL,
// events, the agents it may act for; its API key and HMAC secret shown once), and for each: its
// state, turn off/on, edit, new API key, new HMAC secret, delivery history, delete.
import { useId, useState, type FormEvent } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { AgentBadge } from '../ui/AgentBadge.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { SecretOnce } from '../ui/SecretOnce.tsx'
import { DeliveryHistory } from './DeliveryHistory.tsx'
import { EndpointNotice, StatusPill } from './EndpointStatus.tsx'
import { EventPicker } from './EventPicker.tsx'
import { DEFAULT_INTEGRATION_EVENTS, eventLabel, formatDay, INTEGRATION_EVENTS, platformLabel, PLATFORMS, type IntegrationEvent, type Platform } from './format.ts'
import { ConfirmButton } from './Controls.tsx'
import { Empty, LoadFailed, Loading } from './QueryState.tsx'
import {
  createIntegration,
  deleteIntegration,
  fetchIntegrationDeliveries,
  redeliverIntegration,
  rotateIntegrationKey,
  rotateIntegrationSecret,
  settingsKeys,
  updateIntegration,
  useAgents,
  useIntegrations,
  type Integration,
} from './queries.ts'

/** The API types an integration's `events` as strings: the form keeps those it offers. */
const knownEvents = new Set<string>(INTEGRATION_EVENTS)

interface Shown {
  title: string
  secrets: { label: string; value: string }[]
  note?: string
}

const SENTENCES = {
  INVALID_URL: 'That address cannot receive events: use a public http:// or https:// URL (private and local network addresses are refused).',
  VALIDATION_ERROR: 'Some of what you entered is not valid, or a chosen agent no longer exists. Check the form and try again.',
}

interface Draft {
  name: string
  platform: Platform
  webhookUrl: string
  events: IntegrationEvent[]
  anyAgent: boolean
  agentIds: string[]
}

function AgentChoice({ draft, setDraft }: { draft: Draft; setDraft: (d: Draft) => void }) {
  const agents = useAgents()
  const name = useId()
  return (
    <fieldset className="agent-choice">
      <legend>Agents it may post as</legend>
      <label className="check">
        <input type="radio" name={name} checked={draft.anyAgent} onChange={() => setDraft({ ...draft, anyAgent: true })} />
        <span>Any agent (in the channels that agent belongs to)</span>
      </label>
      <label className="check">
        <input type="radio" name={name} checked={!draft.anyAgent} onChange={() => setDraft({ ...draft, anyAgent: false })} />
        <span>Only the agents chosen here</span>
      </label>
      {!draft.anyAgent && (
        <div className="checks indent">
          {agents.isPending && <Loading what="agents" />}
          {agents.isError && <LoadFailed what="the agents" error={agents.error} retry={() => void agents.refetch()} />}
          {agents.isSuccess && agents.data.length === 0 && <Empty>There are no agents yet. Create one under Agents first.</Empty>}
          {agents.data?.map((agent) => (
            <label key={agent.id} className="check">
              <input
                type="checkbox"
                checked={draft.agentIds.includes(agent.id)}
                onChange={(e) => setDraft({ ...draft, agentIds: e.target.checked ? [...draft.agentIds, agent.id] : draft.agentIds.filter((id) => id !== agent.id) })}
              />
              <span>
                {agent.display_name} <AgentBadge />
              </span>
            </label>
          ))}
          {agents.isSuccess && draft.agentIds.length === 0 && (
            <p className="hint" role="status">
              Choose at least one agent, or allow any agent.
            </p>
          )}
        </div>
      )}
    </fieldset>
  )
}

function IntegrationFields({ draft, setDraft, idPrefix }: { draft: Draft; setDraft: (d: Draft) => void; idPrefix: string }) {
  return (
    <>
      <div className="form-grid">
        <label>
          Name
          <input value={draft.name} required maxLength={100} autoComplete="off" onChange={(e) => setDraft({ ...draft, name: e.target.value })} />
        </label>
        <div className="field">
          <label htmlFor={`${idPrefix}-platform`}>Platform</label>
          <select id={`${idPrefix}-platform`} value={draft.platform} onChange={(e) => setDraft({ ...draft, platform: e.target.value as Platform })}>
            {PLATFORMS.map((p) => (
              <option key={p} value={p}>
                {platformLabel(p)}
              </option>
            ))}
          </select>
        </div>
      </div>
      <div className="field">
        <label>
          Webhook URL
          <input
            type="url"
            value={draft.webhookUrl}
            required
            maxLength={2048}
            placeholder="https://platform.example.com/events"
            autoComplete="off"
            aria-describedby={`${idPrefix}-url-hint`}
            onChange={(e) => setDraft({ ...draft, webhookUrl: e.target.value })}
          />
        </label>
        <p id={`${idPrefix}-url-hint`} className="hint">
          Where the events are POSTed, signed with the integration&apos;s HMAC secret (X-Service-Signature).
        </p>
      </div>
      <EventPicker legend="Send these events" events={INTEGRATION_EVENTS} value={draft.events} onChange={(events) => setDraft({ ...draft, events })} />
      <AgentChoice draft={draft} setDraft={setDraft} />
    </>
  )
}

const ready = (d: Draft) => d.name.trim() !== '' && d.webhookUrl.trim() !== '' && d.events.length > 0 && (d.anyAgent || d.agentIds.length > 0)

function NewIntegration({ onCreated }: { onCreated: (shown: Shown) => void }) {
  const queryClient = useQueryClient()
  const empty: Draft = { name: '', platform: 'custom', webhookUrl: '', events: [...DEFAULT_INTEGRATION_EVENTS], anyAgent: true, agentIds: [] }
  const [draft, setDraft] = useState<Draft>(empty)
  const create = useMutation({
    mutationFn: () =>
      createIntegration({ name: draft.name.trim(), platform: draft.platform, webhook_url: draft.webhookUrl.trim(), events: draft.events, agent_ids: draft.anyAgent ? [] : draft.agentIds }),
    onSuccess: (created) => {
      setDraft(empty)
      onCreated({
        title: `the secrets of ${created.name}`,
        secrets: [
          { label: 'API key', value: created.api_key },
          { label: 'HMAC secret', value: created.hmac_secret },
        ],
        note: 'The platform posts messages with the API key and checks our deliveries with the HMAC secret.',
      })
      void queryClient.invalidateQueries({ queryKey: settingsKeys.integrations })
    },
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (ready(draft)) create.mutate()
  }
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="new-integration-title">
      <h3 id="new-integration-title">Connect a platform</h3>
      <IntegrationFields draft={draft} setDraft={setDraft} idPrefix="new-integration" />
      <ErrorNote error={create.error} sentences={SENTENCES} />
      <div>
        <button type="submit" className="primary" disabled={create.isPending || !ready(draft)}>
          {create.isPending ? 'Creating…' : 'Create integration'}
        </button>
      </div>
    </form>
  )
}

function EditIntegration({ integration, onDone }: { integration: Integration; onDone: () => void }) {
  const queryClient = useQueryClient()
  const [draft, setDraft] = useState<Draft>({
    name: integration.name,
    platform: integration.platform,
    webhookUrl: integration.webhook_url,
    events: integration.events.filter((e): e is IntegrationEvent => knownEvents.has(e)),
    anyAgent: integration.all_agents,
    agentIds: integration.agent_ids,
  })
  const save = useMutation({
    mutationFn: () =>
      updateIntegration(integration.id, {
        name: draft.name.trim(),
        platform: draft.platform,
        webhook_url: draft.webhookUrl.trim(),
        events: draft.events,
        agent_ids: draft.anyAgent ? [] : draft.agentIds,
      }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: settingsKeys.integrations })
      onDone()
    },
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (ready(draft)) save.mutate()
  }
  return (
    <form className="subcard stack" onSubmit={submit} aria-label={`Edit ${integration.name}`}>
      <IntegrationFields draft={draft} setDraft={setDraft} idPrefix={`edit-${integration.id}`} />
      <ErrorNote error={save.error} sentences={SENTENCES} />
      <div className="row-actions">
        <button type="submit" className="primary" disabled={save.isPending || !ready(draft)}>
          {save.isPending ? 'Saving…' : 'Save changes'}
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  )
}

function IntegrationItem({ integration, onSecrets }: { integration: Integration; onSecrets: (shown: Shown) => void }) {
  const queryClient = useQueryClient()
  const agents = useAgents()
  const [history, setHistory] = useState(false)
  const [editing, setEditing] = useState(false)
  const refresh = () => queryClient.invalidateQueries({ queryKey: settingsKeys.integrations })
  const toggle = useMutation({
    mutationFn: (active: boolean) => updateIntegration(integration.id, { active }),
    onSuccess: refresh,
  })
  const rotateKey = useMutation({
    mutationFn: () => rotateIntegrationKey(integration.id),
    onSuccess: (rotated) => {
      void refresh()
      onSecrets({ title: `the new API key of ${integration.name}`, secrets: [{ label: 'API key', value: rotated.api_key }], note: 'The previous key no longer works.' })
    },
  })
  const rotateSecret = useMutation({
    mutationFn: () => rotateIntegrationSecret(integration.id),
    onSuccess: (rotated) =>
      onSecrets({ title: `the new HMAC secret of ${integration.name}`, secrets: [{ label: 'HMAC secret', value: rotated.hmac_secret }], note: 'Every delivery from now on is signed with it.' }),
  })
  const remove = useMutation({
    mutationFn: () => deleteIntegration(integration.id),
    onSuccess: refresh,
  })
  const names = integration.agent_ids.map((id) => agents.data?.find((a) => a.id === id)?.display_name ?? 'a deleted agent')
  return (
    <li className="card endpoint" data-testid="integration">
      <div className="endpoint-head">
        <h3 className="endpoint-name">{integration.name}</h3>
        <span className="tag">{platformLabel(integration.platform)}</span>
        <StatusPill state={integration} />
      </div>
      <dl className="facts small">
        <dt>Webhook URL</dt>
        <dd>
          <code className="endpoint-url">{integration.webhook_url}</code>
        </dd>
        <dt>Events</dt>
        <dd>{integration.events.map(eventLabel).join(' · ')}</dd>
        <dt>Posts as</dt>
        <dd>{integration.all_agents ? 'Any agent' : names.length ? names.join(', ') : 'No agent (its agents were deleted)'}</dd>
        <dt>API key</dt>
        <dd>
          <code>{integration.masked_key}</code>
        </dd>
        <dt>Created</dt>
        <dd>{formatDay(integration.created_at)}</dd>
      </dl>
      <EndpointNotice state={integration} kind="integration" onEnable={() => toggle.mutate(true)} enabling={toggle.isPending} />
      {editing ? (
        <EditIntegration integration={integration} onDone={() => setEditing(false)} />
      ) : (
        <div className="row-actions">
          <button type="button" aria-expanded={history} onClick={() => setHistory(!history)}>
            {history ? 'Hide deliveries' : 'Deliveries'}
          </button>
          <button type="button" onClick={() => setEditing(true)}>
            Edit
          </button>
          {integration.active && (
            <button type="button" disabled={toggle.isPending} onClick={() => toggle.mutate(false)}>
              Turn off
            </button>
          )}
          <ConfirmButton disabled={rotateKey.isPending} question={`Make a new API key for “${integration.name}”? The current key stops working at once.`} onConfirm={() => rotateKey.mutate()}>
            New API key
          </ConfirmButton>
          <ConfirmButton
            disabled={rotateSecret.isPending}
            question={`Make a new HMAC secret for “${integration.name}”? Deliveries are signed with the new one at once.`}
            onConfirm={() => rotateSecret.mutate()}
          >
            New HMAC secret
          </ConfirmButton>
          <ConfirmButton
            className="danger-outline"
            disabled={remove.isPending}
            label={`Delete the integration ${integration.name}`}
            question={`Delete “${integration.name}”? Its API key stops working at once and no more events are sent to it.`}
            onConfirm={() => remove.mutate()}
          >
            Delete
          </ConfirmButton>
        </div>
      )}
      <ErrorNote error={toggle.error ?? rotateKey.error ?? rotateSecret.error ?? remove.error} />
      {history && (
        <DeliveryHistory
          kind="integration"
          active={integration.active}
          queryKey={settingsKeys.integrationDeliveries(integration.id)}
          fetchPage={(before, status) => fetchIntegrationDeliveries(integration.id, before, status)}
          redeliver={(deliveryId) => redeliverIntegration(integration.id, deliveryId)}
        />
      )}
    </li>
  )
}

export function IntegrationsSettings() {
  const integrations = useIntegrations()
  const [shown, setShown] = useState<Shown | null>(null)
  return (
    <div className="settings-section">
      <div className="section-intro">
        <h2>Integrations</h2>
        <p className="muted">
          Connect an external agent platform: the events you choose are POSTed to its URL, signed with its HMAC secret, and it posts messages back as your agents with its own API key.
        </p>
      </div>
      {shown && <SecretOnce key={shown.secrets[0]?.value} label={shown.title} secrets={shown.secrets} note={shown.note} onDone={() => setShown(null)} />}
      <NewIntegration onCreated={setShown} />
      <section aria-labelledby="integration-list-title" className="stack">
        <h3 id="integration-list-title">Connected platforms{integrations.data ? ` (${integrations.data.length})` : ''}</h3>
        {integrations.isPending && <Loading what="integrations" />}
        {integrations.isError && <LoadFailed what="the integrations" error={integrations.error} retry={() => void integrations.refetch()} />}
        {integrations.isSuccess && integrations.data.length === 0 && <Empty>No integrations yet. Connect a platform above.</Empty>}
        {integrations.isSuccess && integrations.data.length > 0 && (
          <ul className="plain-list endpoint-list">
            {integrations.data.map((integration) => (
              <IntegrationItem key={integration.id} integration={integration} onSecrets={setShown} />
            ))}
          </ul>
        )}
      </section>
    </div>
  )
}
