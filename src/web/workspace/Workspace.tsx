// The signed-in layout: sidebar of conversations, the open conversation, the live banner. On a
// narrow screen the sidebar is a drawer opened from the header.
import { lazy, Suspense, useEffect, useRef, useState } from 'react'
import { Redirect, Route, Switch, useRoute } from 'wouter'
import { signOut, useSignedInSession } from '../api/session.ts'
import { Sidebar } from '../channels/Sidebar.tsx'
import { isAwaitingApproval, useChannels, useDms } from '../channels/queries.ts'
import { AuthFrame } from '../ui/AuthFrame.tsx'
import { Switcher } from './Switcher.tsx'
import { BrowsePage } from '../channels/BrowsePage.tsx'
import { ProfilePage } from '../people/ProfilePage.tsx'
import { unreadTotal, useAttentionInTab } from '../live/attention.ts'
import { useMentionCount } from '../mentions/queries.ts'
import { LiveProvider, useLiveStatus } from '../live/LiveContext.tsx'
import { fetchLogHead } from '../live/queries.ts'
import { MentionsPage } from '../mentions/MentionsPage.tsx'
import { useMe } from '../people/queries.ts'
import { NeedsDecisionPage } from '../approvals/NeedsDecisionPage.tsx'
import { ChannelView } from '../messages/ChannelView.tsx'
import { SearchPage } from '../search/SearchPage.tsx'

// Settings are the owner's, and rarely open: their code loads when they are, keeping the first
// visit within its budget.
const SettingsPage = lazy(() => import('../settings/SettingsPage.tsx').then((m) => ({ default: m.SettingsPage })))

function LiveBanner() {
  const status = useLiveStatus()
  if (status !== 'reconnecting') return null
  return (
    <div className="live-banner" role="status" data-testid="reconnecting">
      Connection lost — reconnecting…
    </div>
  )
}

function Home() {
  const channels = useChannels()
  const first = channels.data?.find((c) => c.type === 'channel') ?? channels.data?.[0]
  if (first) return <Redirect to={`/c/${first.id}`} replace />
  return (
    <section className="empty-state">
      <h1>{channels.isPending ? 'Loading…' : 'No conversations yet'}</h1>
      {!channels.isPending && <p>When someone adds you to a channel or sends you a message, it shows up here.</p>}
    </section>
  )
}

function AwaitingApproval() {
  const session = useSignedInSession()
  return (
    <AuthFrame title="Waiting for approval">
      <p role="status" data-testid="awaiting-approval">
        Your account ({session.email}) is waiting for the workspace owner to approve it. You can use the workspace as soon as they do; this page checks now and then.
      </p>
      <button type="button" className="link-button" onClick={() => signOut()}>
        Sign out
      </button>
    </AuthFrame>
  )
}

/**
 * The event log's newest cursor, read before anything else (undefined while asked; null when it
 * could not be): the socket's first connection checks what happened after it, so a message sent
 * while the page loads is shown (LiveProvider). Read once per person: a new token (a changed
 * password) keeps the page, and the socket resumes where it was.
 */
function useLogHead(userId: string): string | null | undefined {
  const [head, setHead] = useState<{ userId: string; cursor: string | null }>()
  useEffect(() => {
    let current = true
    void fetchLogHead()
      .catch(() => null)
      .then((cursor) => current && setHead({ userId, cursor }))
    return () => {
      current = false
    }
  }, [userId])
  return head?.userId === userId ? head.cursor : undefined
}

export function Workspace() {
  const session = useSignedInSession()
  // Who this is is asked meanwhile: it does not change with events.
  useMe()
  const head = useLogHead(session.user_id)
  if (head === undefined) return null
  return <LoadedWorkspace head={head} />
}

function LoadedWorkspace({ head }: { head: string | null }) {
  const [, params] = useRoute('/c/:id')
  const [drawer, setDrawer] = useState(false)
  // The drawer (narrow screens) takes the focus when it opens and gives it back to its button when
  // Escape closes it: the sidebar is hidden once closed, and focus must not stay in it.
  const toggle = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    if (drawer) document.querySelector<HTMLElement>('.sidebar input, .sidebar a')?.focus()
  }, [drawer])
  const activeId = params?.id ?? null
  const channels = useChannels()
  const dms = useDms()
  const unread = unreadTotal(channels.data, dms.data, activeId)
  // The credential is checked over REST before the socket opens: a removed account or an
  // expired session goes back to the login page instead of failing a WebSocket handshake.
  const me = useMe()
  // An account awaiting approval may only ask who it is: it waits, told so, with no socket
  // (which would be refused, again and again, as a lost connection).
  const awaiting = isAwaitingApproval(channels.error)
  const mentions = useMentionCount(channels.isSuccess).data?.mentions ?? 0
  useAttentionInTab(unread, mentions)
  if (awaiting) return <AwaitingApproval />
  return (
    <LiveProvider head={head} enabled={me.isSuccess && !channels.isPending}>
      <div
        className={drawer ? 'workspace drawer-open' : 'workspace'}
        onKeyDown={(e) => {
          // An Escape inside a dialog closes the dialog only.
          if (e.key === 'Escape' && drawer && !(e.target instanceof Element && e.target.closest('dialog'))) {
            setDrawer(false)
            toggle.current?.focus()
          }
        }}
      >
        <a className="skip-link" href="#main-content">
          Skip to the conversation
        </a>
        <button type="button" className="drawer-backdrop" aria-label="Close conversations" tabIndex={-1} onClick={() => setDrawer(false)} />
        <Sidebar activeId={activeId} onNavigate={() => setDrawer(false)} />
        <Switcher onNavigate={() => setDrawer(false)} />
        <main className="main" id="main-content" tabIndex={-1}>
          <button type="button" ref={toggle} className="drawer-toggle" aria-expanded={drawer} onClick={() => setDrawer(!drawer)}>
            <span aria-hidden="true">☰</span> Conversations
            {(unread > 0 || mentions > 0) && (
              <span className="unread-dot" data-testid="menu-unread">
                <span className="visually-hidden">, unread messages</span>
              </span>
            )}
          </button>
          <LiveBanner />
          <Switch>
            <Route path="/c/:id">{(p) => <ChannelView key={p.id} channelId={p.id} />}</Route>
            <Route path="/search">
              <SearchPage />
            </Route>
            <Route path="/browse">
              <BrowsePage onNavigate={() => setDrawer(false)} />
            </Route>
            <Route path="/profile">
              <ProfilePage />
            </Route>
            <Route path="/mentions">
              <MentionsPage />
            </Route>
            <Route path="/decisions">
              <NeedsDecisionPage />
            </Route>
            <Route path="/settings" nest>
              <Suspense fallback={<p className="muted pad">Loading…</p>}>
                <SettingsPage />
              </Suspense>
            </Route>
            <Route path="/">
              <Home />
            </Route>
            <Route>
              <section className="empty-state">
                <h1>Page not found</h1>
              </section>
            </Route>
          </Switch>
        </main>
      </div>
    </LiveProvider>
  )
}
