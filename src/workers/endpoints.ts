// Per-endpoint isolation of delivery attempts (one webhook or integration = one endpoint), in
// each instance: a small concurrency limit, so one slow or hanging receiver holds at most that
// many of the instance's shared delivery slots, and a circuit breaker, so an endpoint that keeps
// failing (errors or timeouts) gets one probe at a time instead of a slot per delivery.
//
// closed    — up to `concurrency` attempts at once; `failureThreshold` failures in a row open it.
// open      — no attempt until `cooldownMs` after the last failure.
// half-open — after the cooldown, one probe attempt: success closes it, failure opens it again.
//
// An attempt that is not admitted is not made: the delivery is put back in PostgreSQL for later
// (src/workers/deliveries.ts), without counting an attempt, and its shared slot is free at once.

export interface EndpointLimits {
  concurrency: number
  failureThreshold: number
  cooldownMs: number
}

/** How long a delivery for an endpoint already at its concurrency limit waits before it is tried again. */
export const SATURATED_RETRY_MS = 250

interface EndpointState {
  inFlight: number
  failures: number
  openUntil: number
  probing: boolean
}

/** `done(null)`: no attempt was made after all (a stale queue item): the slot is given back, the breaker unchanged. */
export type Admission = { admitted: true; done: (success: boolean | null) => void } | { admitted: false; retryInMs: number; reason: 'busy' | 'open' }

export class EndpointGate {
  private readonly endpoints = new Map<string, EndpointState>()

  constructor(private readonly limits: EndpointLimits) {}

  admit(endpoint: string, now = Date.now()): Admission {
    let s = this.endpoints.get(endpoint)
    if (!s) {
      s = { inFlight: 0, failures: 0, openUntil: 0, probing: false }
      this.endpoints.set(endpoint, s)
    }
    if (s.openUntil > now) return { admitted: false, retryInMs: s.openUntil - now, reason: 'open' }
    const probe = s.failures >= this.limits.failureThreshold
    if (probe ? s.probing || s.inFlight > 0 : s.inFlight >= this.limits.concurrency) {
      return { admitted: false, retryInMs: SATURATED_RETRY_MS, reason: 'busy' }
    }
    if (probe) s.probing = true
    s.inFlight += 1
    const state = s
    let finished = false
    return {
      admitted: true,
      done: (success) => {
        if (finished) return
        finished = true
        state.inFlight -= 1
        if (probe) state.probing = false
        if (success === null) {
          // nothing was sent
        } else if (success) {
          state.failures = 0
          state.openUntil = 0
        } else {
          state.failures += 1
          if (state.failures >= this.limits.failureThreshold) state.openUntil = Date.now() + this.limits.cooldownMs
        }
        if (state.inFlight === 0 && state.failures === 0) this.endpoints.delete(endpoint)
      },
    }
  }

  /** The breaker of an endpoint, for logs and tests. */
  state(endpoint: string, now = Date.now()): 'closed' | 'open' | 'half-open' {
    const s = this.endpoints.get(endpoint)
    if (!s || s.failures < this.limits.failureThreshold) return 'closed'
    return s.openUntil > now ? 'open' : 'half-open'
  }
}
