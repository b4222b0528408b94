// Workspace settings, for the owner only (the API refuses everyone else anyway): agents with
// their keys and webhooks, integrations, people and invites, and the workspace's limits. Mounted
// at /settings (nested), so the paths below are relative to it.
import type { ReactNode } from 'react'
import { Link, Redirect, Route, Switch, useLocation } from 'wouter'
import { useSignedInSession } from '../api/session.ts'
import { AgentDetail } from './AgentDetail.tsx'
import { AgentsSettings } from './AgentsSettings.tsx'
import { IntegrationsSettings } from './IntegrationsSettings.tsx'
import { OwnerOnly } from './OwnerOnly.tsx'
import { PeopleSettings } from './PeopleSettings.tsx'
import { WorkspaceSettings } from './WorkspaceSettings.tsx'
import './settings.css'

function Tab({ href, children }: { href: string; children: ReactNode }) {
  const [location] = useLocation()
  const current = location === href || location.startsWith(`${href}/`)
  return (
    <Link href={href} className={current ? 'settings-tab current' : 'settings-tab'} aria-current={current ? 'page' : undefined}>
      {children}
    </Link>
  )
}

export function SettingsPage() {
  const session = useSignedInSession()
  if (!session.is_owner) return <OwnerOnly />
  return (
    <section className="settings" aria-labelledby="settings-title">
      <header className="settings-header">
        <h1 id="settings-title">Workspace settings</h1>
        <nav aria-label="Settings sections" className="settings-tabs">
          <Tab href="/agents">Agents</Tab>
          <Tab href="/integrations">Integrations</Tab>
          <Tab href="/people">People</Tab>
          <Tab href="/workspace">Workspace</Tab>
        </nav>
      </header>
      <div className="settings-body">
        <Switch>
          <Route path="/">
            <Redirect to="/agents" replace />
          </Route>
          <Route path="/agents">
            <AgentsSettings />
          </Route>
          <Route path="/agents/:id">{(p) => <AgentDetail key={p.id} agentId={p.id} />}</Route>
          <Route path="/integrations">
            <IntegrationsSettings />
          </Route>
          <Route path="/people">
            <PeopleSettings />
          </Route>
          <Route path="/workspace">
            <WorkspaceSettings />
          </Route>
          <Route>
            <div className="empty-state">
              <h2>There is no such settings page</h2>
              <p>
                <Link href="/agents">Go to the agents</Link>
              </p>
            </div>
          </Route>
        </Switch>
      </div>
    </section>
  )
}
