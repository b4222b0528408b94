// Channels and direct messages, each a link to its conversation.
import { useState } from 'react'
import { Link } from 'wouter'
import { useSignedInSession } from '../api/session.ts'
import { signOut } from '../api/session.ts'
import { AgentBadge } from '../ui/AgentBadge.tsx'
import { OnlineDot } from '../ui/OnlineDot.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { SearchBox } from '../search/SearchBox.tsx'
import { notificationsSupported, setNotifications, useNotificationsOn } from '../live/attention.ts'
import { useMentionCount } from '../mentions/queries.ts'
import { openSwitcher } from '../workspace/Switcher.tsx'
import { NewChannel } from './NewChannel.tsx'
import { NewDm } from './NewDm.tsx'
import { useChannels, useDms } from './queries.ts'
import { usePendingApprovals } from '../approvals/queries.ts'

function Unread({ count }: { count: number }) {
  if (count <= 0) return null
  return (
    <span className="unread" data-testid="unread">
      {count > 99 ? '99+' : count}
      <span className="visually-hidden"> unread</span>
    </span>
  )
}

/** Direct messages, the most recently active first (kept current by events: sidebar-state.ts). */
function byActivity<T extends { last_message_at?: string | null; created_at: string }>(list: T[] | undefined): T[] {
  const at = (dm: T) => dm.last_message_at ?? dm.created_at
  return (list ?? []).slice().sort((a, b) => at(b).localeCompare(at(a)))
}

/** Desktop notifications for DMs and mentions: off until turned on here. */
function NotificationToggle() {
  const on = useNotificationsOn()
  const [refused, setRefused] = useState(false)
  if (!notificationsSupported()) return null
  return (
    <div className="notify-toggle">
      <button
        type="button"
        className="link-button small"
        aria-pressed={on}
        onClick={() => {
          void setNotifications(!on).then((now) => setRefused(!on && !now))
        }}
      >
        {on ? 'Desktop notifications: on' : 'Turn on desktop notifications'}
      </button>
      {refused && (
        <p className="muted small" role="status">
          The browser blocks notifications for this site; allow them in its site settings.
        </p>
      )}
    </div>
  )
}

export function Sidebar({ activeId, onNavigate }: { activeId: string | null; onNavigate?: () => void }) {
  const session = useSignedInSession()
  const channels = useChannels()
  const dms = useDms()
  const regular = (channels.data ?? []).filter((c) => c.type === 'channel')
  const mentions = useMentionCount().data?.mentions ?? 0
  const decisions = usePendingApprovals().data?.approvals.length ?? 0
  return (
    <nav className="sidebar" aria-label="Conversations">
      <div className="sidebar-head">
        <span className="brand-mark" aria-hidden="true" />
        <span className="workspace-name">Agent Messaging</span>
      </div>
      <SearchBox onSearch={onNavigate} />
      <button type="button" className="link-button small switcher-button" onClick={openSwitcher} aria-keyshortcuts="Control+K Meta+K">
        Jump to… <kbd>Ctrl K</kbd>
      </button>
      <Link
        href="/mentions"
        onClick={onNavigate}
        className={activeId === null && location.pathname === '/mentions' ? 'conversation mentions-link active' : 'conversation mentions-link'}
        aria-current={activeId === null && location.pathname === '/mentions' ? 'page' : undefined}
      >
        <span aria-hidden="true" className="hash">
          @
        </span>
        <span className="conversation-name">Mentions</span>
        {mentions > 0 && (
          <span className="unread mentions-badge" data-testid="mentions-badge">
            {mentions > 99 ? '99+' : mentions}
            <span className="visually-hidden"> new</span>
          </span>
        )}
      </Link>
      {(decisions > 0 || location.pathname === '/decisions') && (
        <Link
          href="/decisions"
          onClick={onNavigate}
          className={location.pathname === '/decisions' ? 'conversation mentions-link active' : 'conversation mentions-link'}
          aria-current={location.pathname === '/decisions' ? 'page' : undefined}
        >
          <span aria-hidden="true" className="hash">
            ✓
          </span>
          <span className="conversation-name">Needs your decision</span>
          {decisions > 0 && (
            <span className="unread mentions-badge" data-testid="decisions-badge">
              {decisions > 99 ? '99+' : decisions}
              <span className="visually-hidden"> waiting</span>
            </span>
          )}
        </Link>
      )}
      <h2 className="sidebar-title" id="channels-title">
        Channels
      </h2>
      {channels.isPending && <p className="muted small">Loading…</p>}
      <ErrorNote error={channels.error} />
      <ul aria-labelledby="channels-title" className="conversation-list">
        {regular.map((channel) => (
          <li key={channel.id}>
            <Link
              href={`/c/${channel.id}`}
              onClick={onNavigate}
              className={channel.id === activeId ? 'conversation active' : 'conversation'}
              aria-current={channel.id === activeId ? 'page' : undefined}
            >
              <span aria-hidden="true" className="hash">
                #
              </span>
              <span className="conversation-name">{channel.name}</span>
              <Unread count={channel.id === activeId ? 0 : channel.unread_count} />
            </Link>
          </li>
        ))}
        {channels.isSuccess && regular.length === 0 && <li className="muted small">No channels yet.</li>}
      </ul>
      {session.role !== 'observer' && <NewChannel onCreated={onNavigate} />}
      <Link href="/browse" onClick={onNavigate} className="link-button small new-channel browse-link">
        Browse channels
      </Link>
      <h2 className="sidebar-title" id="dms-title">
        Direct messages
      </h2>
      <ul aria-labelledby="dms-title" className="conversation-list">
        {byActivity(dms.data).map((dm) => (
          <li key={dm.id}>
            <Link href={`/c/${dm.id}`} onClick={onNavigate} className={dm.id === activeId ? 'conversation active' : 'conversation'} aria-current={dm.id === activeId ? 'page' : undefined}>
              <span className="conversation-name">{dm.participant.name}</span>
              {dm.participant.type === 'AGENT' && <AgentBadge />}
              <OnlineDot memberId={dm.participant.id} />
              <Unread count={dm.id === activeId ? 0 : dm.unread_count} />
            </Link>
          </li>
        ))}
        {dms.isSuccess && dms.data.length === 0 && <li className="muted small">No direct messages yet.</li>}
      </ul>
      {session.role !== 'observer' && <NewDm onOpened={onNavigate} />}
      {session.is_owner && (
        <Link href="/settings" onClick={onNavigate} className={activeId === null && location.pathname.startsWith('/settings') ? 'conversation settings-link active' : 'conversation settings-link'}>
          Workspace settings
        </Link>
      )}
      <NotificationToggle />
      <div className="sidebar-foot">
        <Link href="/profile" onClick={onNavigate} className="me" title={`${session.email}: your profile`}>
          {session.display_name}
        </Link>
        <button type="button" className="link-button" onClick={() => signOut()}>
          Sign out
        </button>
      </div>
    </nav>
  )
}
