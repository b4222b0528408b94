// Workspace-wide settings: the API rate limit, who may sign up and the loop guard, plus the
// instance's identity.
import { useId, useState, type FormEvent } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { SaveRow } from './Controls.tsx'
import { formatWhen } from './format.ts'
import { LoadFailed, Loading } from './QueryState.tsx'
import { settingsKeys, updateWorkspace, useWorkspace, type Workspace } from './queries.ts'

type Mode = Workspace['registration_mode']
type WorkspacePatch = {
  rate_limit_per_minute?: number | null
  registration_mode?: Mode
  loop_guard_enabled?: boolean
  loop_guard_max_turns?: number
  loop_guard_window_seconds?: number
  loop_guard_max_depth?: number
}

const MAX_RATE = 1_000_000
const number = new Intl.NumberFormat()

const describeLimit = (perMinute: number) => (perMinute === 0 ? 'no limit' : `${number.format(perMinute)} requests per minute for the whole workspace`)

function useSaveWorkspace() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (body: WorkspacePatch) => updateWorkspace(body),
    onSuccess: (workspace) => queryClient.setQueryData(settingsKeys.workspace, workspace),
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

// The loop guard's numbers: bounds as the API has them (src/modules/workspace/schemas.ts).
const GUARD_FIELDS = [
  {
    key: 'loop_guard_max_turns',
    label: 'Turns',
    min: 1,
    max: 1_000,
    help: 'How many times the same two agents may answer each other (a change of author between agents that hear the conversation) within the window before the next answer is refused; an agent posting on its own is never counted, and agents posting on their own schedules are not an exchange.',
  },
  {
    key: 'loop_guard_window_seconds',
    label: 'Window (seconds)',
    min: 1,
    max: 86_400,
    help: 'The sliding time span the turns are counted in; a human message in the conversation starts the count over.',
  },
  {
    key: 'loop_guard_max_depth',
    label: 'Longest reply chain',
    min: 0,
    max: 10_000,
    help: 'How many agent messages may follow each other as replies (in_reply_to_event), one agent answering itself included; 0 means no cap.',
  },
] as const
type GuardKey = (typeof GUARD_FIELDS)[number]['key']

function LoopGuard({ workspace }: { workspace: Workspace }) {
  const [enabled, setEnabled] = useState(workspace.loop_guard_enabled)
  const [values, setValues] = useState<Record<GuardKey, string>>({
    loop_guard_max_turns: String(workspace.loop_guard_max_turns),
    loop_guard_window_seconds: String(workspace.loop_guard_window_seconds),
    loop_guard_max_depth: String(workspace.loop_guard_max_depth),
  })
  const [saved, setSaved] = useState(false)
  const save = useSaveWorkspace()
  const valid = (f: (typeof GUARD_FIELDS)[number]) => /^\d+$/.test(values[f.key].trim()) && Number(values[f.key]) >= f.min && Number(values[f.key]) <= f.max
  const allValid = GUARD_FIELDS.every(valid)
  const submit = (event: FormEvent) => {
    event.preventDefault()
    setSaved(false)
    if (!allValid) return
    save.mutate(
      {
        loop_guard_enabled: enabled,
        loop_guard_max_turns: Number(values.loop_guard_max_turns),
        loop_guard_window_seconds: Number(values.loop_guard_window_seconds),
        loop_guard_max_depth: Number(values.loop_guard_max_depth),
      },
      { onSuccess: () => setSaved(true) },
    )
  }
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="loops-title">
      <div>
        <h3 id="loops-title">Loop guard</h3>
        <p className="small">
          Stops agents that keep answering each other (two bots whose webhooks reply to every message of the other) without slowing agents that simply post a lot. A refused post gets “loop detected”
          and is not stored.
        </p>
      </div>
      <label className="check">
        <input
          type="checkbox"
          checked={enabled}
          aria-describedby="loops-enabled-help"
          onChange={(e) => {
            setEnabled(e.target.checked)
            setSaved(false)
          }}
        />
        <span>
          <strong>Stop loops between agents</strong>
          <span id="loops-enabled-help" className="muted small block">
            Turns the turn limit and the reply-chain cap on or off together; off, agents are never refused for looping.
          </span>
        </span>
      </label>
      {GUARD_FIELDS.map((f) => (
        <div key={f.key} className="field narrow">
          <label>
            {f.label}
            <input
              type="number"
              inputMode="numeric"
              min={f.min}
              max={f.max}
              step={1}
              value={values[f.key]}
              disabled={!enabled}
              aria-invalid={!valid(f)}
              aria-describedby={`${f.key}-help`}
              onChange={(e) => {
                setValues({ ...values, [f.key]: e.target.value })
                setSaved(false)
              }}
            />
          </label>
          <p id={`${f.key}-help`} className={valid(f) ? 'hint' : 'hint error-note'}>
            {f.help} A whole number from {number.format(f.min)} to {number.format(f.max)}.
          </p>
        </div>
      ))}
      <ErrorNote error={save.error} sentences={{ VALIDATION_ERROR: 'Each number must be a whole number within the range shown under it.' }} />
      <SaveRow label="Save loop guard" pending={save.isPending} disabled={!allValid} saved={saved} />
    </form>
  )
}

export function WorkspaceSettings() {
  const workspace = useWorkspace()
  return (
    <div className="settings-section">
      <div className="section-intro">
        <h2>Workspace</h2>
        <p className="muted">Limits, sign-up rules and the loop guard that apply to everyone in this workspace.</p>
      </div>
      {workspace.isPending && <Loading what="the workspace settings" />}
      {workspace.isError && <LoadFailed what="the workspace settings" error={workspace.error} retry={() => void workspace.refetch()} />}
      {workspace.isSuccess && (
        <>
          <RateLimit workspace={workspace.data} />
          <Registration workspace={workspace.data} />
          <LoopGuard workspace={workspace.data} />
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
