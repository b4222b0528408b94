// One conversation: its header (with its members), the message list and the composer. The list
// opens at the newest messages, or at `?message=<id>` (a search result).
import { useEffect, useState } from 'react'
import { useLocation, useSearch } from 'wouter'
import { useSignedInSession } from '../api/session.ts'
import { MembersDialog } from '../channels/MembersDialog.tsx'
import { useChannel, useChannels, useDms } from '../channels/queries.ts'
import { AgentBadge } from '../ui/AgentBadge.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { Composer } from './Composer.tsx'
import { MessageList, type UnreadAtOpen } from './MessageList.tsx'
import { ThreadPanel } from './ThreadPanel.tsx'
import { TypingLine } from './TypingLine.tsx'
import { OnlineDot } from '../ui/OnlineDot.tsx'

export function ChannelView({ channelId }: { channelId: string }) {
  const session = useSignedInSession()
  const channel = useChannel(channelId)
  const dms = useDms()
  const search = new URLSearchParams(useSearch())
  const anchor = search.get('message')
  const threadId = search.get('thread')
  const [location, navigate] = useLocation()
  const closeThread = () => {
    search.delete('thread')
    const rest = search.toString()
    navigate(rest ? `${location}?${rest}` : location)
  }
  const [membersOpen, setMembersOpen] = useState(false)
  // Where reading stopped, as it was when the conversation opened: the "new messages" line stays
  // there while the marker moves on.
  const channels = useChannels()
  const summary = channels.data?.find((c) => c.id === channelId) ?? dms.data?.find((d) => d.id === channelId)
  const [unreadAtOpen, setUnreadAtOpen] = useState<UnreadAtOpen | null | undefined>(undefined)
  useEffect(() => {
    if (unreadAtOpen === undefined && summary) setUnreadAtOpen(summary.unread_count > 0 ? { lastReadId: summary.last_read_message_id, count: summary.unread_count } : null)
  }, [summary, unreadAtOpen])
  if (channel.isPending) {
    return (
      <section className="channel-view" aria-busy="true">
        <p className="muted pad">Loading…</p>
      </section>
    )
  }
  if (channel.error) {
    return (
      <section className="channel-view">
        <div className="pad">
          <h1>Cannot open this conversation</h1>
          <ErrorNote error={channel.error} />
        </div>
      </section>
    )
  }
  const info = channel.data
  const dm = info.type === 'dm' ? dms.data?.find((d) => d.id === info.id) : undefined
  const title = dm ? dm.participant.name : info.name
  let readOnly: string | null = null
  if (session.role === 'observer') readOnly = 'You joined as an observer: you can read this conversation but not post in it.'
  // The owner may post in any regular channel (the first post joins it); others must be members.
  else if (!info.is_member && !(session.is_owner && info.type === 'channel')) readOnly = 'You are not a member of this channel, so you can read it but not post. Ask a member to add you.'
  return (
    <div className={threadId ? 'channel-with-thread thread-open' : 'channel-with-thread'}>
      <section className="channel-view" aria-labelledby="channel-title">
        <header className="channel-header">
          <h1 id="channel-title">
            {info.type === 'channel' && (
              <span aria-hidden="true" className="hash">
                #
              </span>
            )}
            {title}
            {dm?.participant.type === 'AGENT' && <AgentBadge />}
            {dm && <OnlineDot memberId={dm.participant.id} withStatus />}
          </h1>
          {(info.topic || info.description) && <p className="channel-topic">{info.topic || info.description}</p>}
          {info.type === 'channel' && (
            <button type="button" className="members-button" onClick={() => setMembersOpen(true)} aria-haspopup="dialog">
              {info.member_count === 1 ? '1 member' : `${info.member_count} members`}
            </button>
          )}
        </header>
        {membersOpen && <MembersDialog channel={info} onClose={() => setMembersOpen(false)} />}
        <MessageList key={anchor ?? 'newest'} channelId={channelId} keepsReadMarker={info.is_member} anchor={anchor} unread={unreadAtOpen ?? null} />
        <TypingLine channelId={channelId} />
        <Composer
          channelId={channelId}
          title={title}
          readOnly={readOnly}
          // What one sends shows at the newest messages: leave the older page it was read from.
          onSent={() => {
            if (anchor) navigate(`/c/${channelId}`)
          }}
        />
      </section>
      {threadId && <ThreadPanel key={threadId} channelId={channelId} place={info.type === 'channel' ? `#${title}` : title} rootId={threadId} readOnly={readOnly} onClose={closeThread} />}
    </div>
  )
}
