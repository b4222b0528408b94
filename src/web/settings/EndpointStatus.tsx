// The state of something we deliver events to (an agent's webhook, an integration): on, failing,
// or off — and when off, why, in words, with the way to turn it back on.
import { formatWhen } from './format.ts'

export interface EndpointState {
  active: boolean
  disabled_at: string | null
  disabled_reason: string | null
  consecutive_failures: number
  failing_since: string | null
}

export function StatusPill({ state }: { state: EndpointState }) {
  if (!state.active) return <span className="pill pill-off">Turned off</span>
  if (state.consecutive_failures > 0) return <span className="pill pill-warn">Failing</span>
  return <span className="pill pill-on">On</span>
}

/**
 * Why it is off. The server words the reason; the two kinds it gives get a heading a person can
 * act on: turned off by hand (the owner, or the agent itself), or automatically after failing for a long time.
 */
function why(reason: string | null): { title: string; detail: string | null } {
  if (!reason) return { title: 'It was turned off.', detail: null }
  if (/^disabled by /i.test(reason)) return { title: 'It was turned off by hand, not because of failures.', detail: null }
  if (/^disabled after /i.test(reason)) {
    const detail = reason.replace(/^disabled /i, 'Turned off ').replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, (iso) => formatWhen(iso))
    return { title: 'It was turned off automatically because deliveries kept failing.', detail }
  }
  return { title: 'It was turned off.', detail: reason }
}

export function EndpointNotice({ state, kind, onEnable, enabling }: { state: EndpointState; kind: string; onEnable: () => void; enabling: boolean }) {
  if (state.active) {
    if (state.consecutive_failures === 0) return null
    return (
      <p className="notice notice-warn">
        The last {state.consecutive_failures === 1 ? 'attempt' : `${state.consecutive_failures} attempts`} failed
        {state.failing_since ? ` (failing since ${formatWhen(state.failing_since)})` : ''}. Deliveries are retried; if it keeps failing for a long time the {kind} is turned off.
      </p>
    )
  }
  const { title, detail } = why(state.disabled_reason)
  return (
    <div className="notice notice-off" data-testid="disabled-notice">
      <p>
        <strong>This {kind} is off and receives no events.</strong> {title}
        {state.disabled_at ? ` (${formatWhen(state.disabled_at)})` : ''}
      </p>
      {detail && <p className="reason">{detail}</p>}
      <div>
        <button type="button" className="secondary" onClick={onEnable} disabled={enabling}>
          {enabling ? 'Turning on…' : 'Turn it back on'}
        </button>
      </div>
    </div>
  )
}
