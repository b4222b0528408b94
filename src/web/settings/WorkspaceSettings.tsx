// Workspace-wide settings: the API rate limit and who may sign up, plus the instance's identity.
import { useId, useState, type FormEvent } from 'react'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { SaveRow } from './Controls.tsx'
import { formatWhen } from './format.ts'
import { LoadFailed, Loading } from './QueryState.tsx'

const fetchWorkspace = () => unwrap(api.GET('/api/v1/workspace'))
type Workspace = Awaited<ReturnType<typeof fetchWorkspace>>
type Mode = Workspace['registration_mode']

const MAX_RATE = 1_000_000
const number = new Intl.NumberFormat()

const describeLimit = (perMinute: number) => (perMinute === 0 ? 'no limit' : `${number.format(perMinute)} requests per minute for the whole workspace`)

function useSaveWorkspace() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (body: { rate_limit_per_minute?: number | null; registration_mode?: Mode }) => unwrap(api.PATCH('/api/v1/workspace', { body })),
    onSuccess: (workspace) => queryClient.setQueryData(['workspace'], workspace),
  })
}

type LimitChoice = 'default' | 'none' | 'custom'

function RateLimit({ workspace }: { workspace: Workspace }) {
  const initial: LimitChoice = workspace.rate_limit_per_minute === null ? 'default' : workspace.rate_limit_per_minute === 0 ? 'none' : 'custom'
  const [choice, setChoice] = useState<LimitChoice>(initial)
  const [custom, setCustom] = useState(workspace.rate_limit_per_minute ? String(workspace.rate_limit_per_minute) : '1000')
  const [saved, setSaved] = useState(false)
  const save = useSaveWorkspace()
  const name = useId()
  const value = Number(custom)
  const customValid = /^\d+$/.test(custom.trim()) && value >= 1 && value <= MAX_RATE
  const submit = (event: FormEvent) => {
    event.preventDefault()
    setSaved(false)
    if (choice === 'custom' && !customValid) return
    const rate_limit_per_minute = choice === 'default' ? null : choice === 'none' ? 0 : value
    save.mutate({ rate_limit_per_minute }, { onSuccess: () => setSaved(true) })
  }
  const pick = (next: LimitChoice) => {
    setChoice(next)
    setSaved(false)
  }
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="rate-title">
      <div>
        <h3 id="rate-title">API rate limit</h3>
        <p className="small" data-testid="effective-limit">
          In force now: <strong>{describeLimit(workspace.effective_rate_limit_per_minute)}</strong>. Over the limit, requests are refused with “too many requests” until the minute is over. Changes
          apply at once.
        </p>
      </div>
      <fieldset>
        <legend>Limit</legend>
        <div className="checks">
          <label className="check">
            <input type="radio" name={name} checked={choice === 'default'} onChange={() => pick('default')} />
            <span>The server&apos;s default (set by whoever runs the server)</span>
          </label>
          <label className="check">
            <input type="radio" name={name} checked={choice === 'none'} onChange={() => pick('none')} />
            <span>No limit</span>
          </label>
          <label className="check">
            <input type="radio" name={name} checked={choice === 'custom'} onChange={() => pick('custom')} />
            <span>A limit of my own</span>
          </label>
        </div>
      </fieldset>
      {choice === 'custom' && (
        <div className="field narrow">
          <label>
            Requests per minute
            <input
              type="number"
              inputMode="numeric"
              min={1}
              max={MAX_RATE}
              step={1}
              value={custom}
              aria-invalid={!customValid}
              aria-describedby="rate-rule"
              onChange={(e) => {
                setCustom(e.target.value)
                setSaved(false)
              }}
            />
          </label>
          <p id="rate-rule" className={customValid ? 'hint' : 'hint error-note'}>
            A whole number from 1 to {number.format(MAX_RATE)}, counted for all agents and people together.
          </p>
        </div>
      )}
      <ErrorNote error={save.error} sentences={{ VALIDATION_ERROR: `The limit must be a whole number from 1 to ${number.format(MAX_RATE)}.` }} />
      <SaveRow label="Save limit" pending={save.isPending} disabled={choice === 'custom' && !customValid} saved={saved} />
    </form>
  )
}

const MODES: { mode: Mode; title: string; help: string }[] = [
  { mode: 'closed', title: 'Invitation only', help: 'Nobody can sign up; people join with an invite link you send.' },
  { mode: 'approval', title: 'Sign-up with approval', help: 'Anyone can sign up, and waits under People until you approve them.' },
  { mode: 'open', title: 'Open sign-up', help: 'Anyone who can reach this server can sign up and join as a member at once.' },
]

function Registration({ workspace }: { workspace: Workspace }) {
  const [mode, setMode] = useState<Mode>(workspace.registration_mode)
  const [saved, setSaved] = useState(false)
  const save = useSaveWorkspace()
  const name = useId()
  const submit = (event: FormEvent) => {
    event.preventDefault()
    setSaved(false)
    save.mutate({ registration_mode: mode }, { onSuccess: () => setSaved(true) })
  }
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="signup-title">
      <h3 id="signup-title">Who can join</h3>
      <fieldset>
        <legend className="visually-hidden">Sign-up</legend>
        <div className="checks">
          {MODES.map((m) => (
            <label key={m.mode} className="check">
              <input
                type="radio"
                name={name}
                checked={mode === m.mode}
                onChange={() => {
                  setMode(m.mode)
                  setSaved(false)
                }}
              />
              <span>
                <strong>{m.title}</strong>
                <span className="muted small block">{m.help}</span>
              </span>
            </label>
          ))}
        </div>
      </fieldset>
      <ErrorNote error={save.error} />
      <SaveRow label="Save" pending={save.isPending} disabled={mode === workspace.registration_mode} saved={saved} />
    </form>
  )
}

export function WorkspaceSettings() {
  const workspace = useQuery({ queryKey: ['workspace'], queryFn: fetchWorkspace })
  return (
    <div className="settings-section">
      <div className="section-intro">
        <h2>Workspace</h2>
        <p className="muted">Limits and sign-up rules that apply to everyone in this workspace.</p>
      </div>
      {workspace.isPending && <Loading what="the workspace settings" />}
      {workspace.isError && <LoadFailed what="the workspace settings" error={workspace.error} retry={() => void workspace.refetch()} />}
      {workspace.isSuccess && (
        <>
          <RateLimit workspace={workspace.data} />
          <Registration workspace={workspace.data} />
          <section className="card stack" aria-labelledby="about-title">
            <h3 id="about-title">About this workspace</h3>
            <dl className="facts small">
              <dt>Instance id</dt>
              <dd>
                <code>{workspace.data.instance_id}</code>
              </dd>
              <dt>Set up</dt>
              <dd>{formatWhen(workspace.data.bootstrapped_at)}</dd>
            </dl>
          </section>
        </>
      )}
    </div>
  )
}
