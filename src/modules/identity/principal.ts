// Who is calling, and what their role lets them do: the principal every route, service and
// connection works with, and the role predicates, written once. The auth plugin
// (src/plugins/auth.ts) only turns a credential into one of these.

export interface AgentPrincipal {
  kind: 'agent'
  id: string
  name: string
  displayName: string
  keyId: string
}

export interface HumanPrincipal {
  kind: 'human'
  id: string
  email: string
  displayName: string
  role: 'admin' | 'member' | 'observer'
  isOwner: boolean
  avatarUrl?: string | null
  /** Self-registered, not yet approved by the owner: only GET /api/v1/auth/me is allowed. */
  awaitingApproval?: boolean
}

export interface IntegrationPrincipal {
  kind: 'integration'
  id: string
}

export type Principal = AgentPrincipal | HumanPrincipal | IntegrationPrincipal
/** An agent or a human: a member of channels (an integration acts through its agent). */
export type MemberPrincipal = AgentPrincipal | HumanPrincipal

/** The workspace owner: the human who bootstrapped it; reads every regular channel. */
export const isOwner = (p: Principal): p is HumanPrincipal => p.kind === 'human' && p.isOwner

/** A human with the observer role: reads, never writes. */
export const isObserver = (p: Principal): p is HumanPrincipal => p.kind === 'human' && p.role === 'observer'

/** A human with the admin role (the workspace owner is one). The primary agent is an admin too: see channels/access.ts isAdmin. */
export const isHumanAdmin = (p: Principal): p is HumanPrincipal => p.kind === 'human' && p.role === 'admin'
