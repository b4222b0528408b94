// One reconnecting socket per signed-in tab (src/sdk/realtime.ts). Events update the cached
// server state in place (messages) or mark it stale (channels, members); `resync_required`
// refetches everything. The connection state is shared for the "reconnecting…" banner.
import { createContext, useContext, useEffect, useState, type ReactNode } from 'react'
import { useQueryClient, type InfiniteData, type QueryClient } from '@tanstack/react-query'
import { RealtimeClient, type RealtimeEvent, type RealtimeStatus, type SocketLike } from '../../sdk/realtime.ts'
import type { Session } from '../api/session.ts'
import type { Message, MessagePage } from '../messages/types.ts'

const LiveStatus = createContext<RealtimeStatus>('connecting')
export const useLiveStatus = () => useContext(LiveStatus)

type Pages = InfiniteData<MessagePage, string | null>

function updateMessages(queryClient: QueryClient, channelId: string, change: (messages: Message[], index: number) => Message[]) {
  queryClient.setQueryData<Pages>(['messages', channelId], (data) => {
    if (!data) return data
    return { ...data, pages: data.pages.map((page, index) => ({ ...page, messages: change(page.messages, index) })) }
  })
}

export function applyEvent(queryClient: QueryClient, event: RealtimeEvent, me: string): void {
  const channelId = event.channel_id
  switch (event.type) {
    case 'new_message': {
      const message = event.message as Message
      updateMessages(queryClient, channelId, (messages, index) =>
        index === 0 && !messages.some((m) => m.id === message.id) ? [message, ...messages] : messages,
      )
      if (message.author_id !== me) queryClient.invalidateQueries({ queryKey: ['sidebar'] })
      return
    }
    case 'message_updated': {
      const message = event.message as Message
      updateMessages(queryClient, channelId, (messages) => messages.map((m) => (m.id === message.id ? message : m)))
      return
    }
    case 'message_deleted': {
      const id = event.message_id as string
      updateMessages(queryClient, channelId, (messages) => messages.filter((m) => m.id !== id))
      queryClient.invalidateQueries({ queryKey: ['sidebar'] })
      return
    }
    case 'member_joined':
    case 'member_left':
      queryClient.invalidateQueries({ queryKey: ['members', channelId] })
      queryClient.invalidateQueries({ queryKey: ['channel', channelId] })
      if (event.member_id === me) queryClient.invalidateQueries({ queryKey: ['sidebar'] })
      return
    default:
      // channel_created, channel_updated, channel_deleted
      queryClient.invalidateQueries({ queryKey: ['sidebar'] })
      queryClient.invalidateQueries({ queryKey: ['channel', channelId] })
  }
}

function socketUrl(token: string, since: string | null): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:'
  const query = new URLSearchParams({ token })
  if (since) query.set('since', since)
  return `${scheme}//${location.host}/ws?${query.toString()}`
}

export function LiveProvider({ session, enabled, children }: { session: Session; enabled: boolean; children: ReactNode }) {
  const queryClient = useQueryClient()
  const [status, setStatus] = useState<RealtimeStatus>('connecting')
  useEffect(() => {
    if (!enabled) return
    const client = new RealtimeClient({
      url: (since) => socketUrl(session.token, since),
      // The DOM types its handlers with DOM event classes; SocketLike only needs their `data`/`code`.
      connect: (url) => new WebSocket(url) as unknown as SocketLike,
      onEvent: (event) => applyEvent(queryClient, event, session.user_id),
      onResync: () => queryClient.invalidateQueries(),
      onStatus: (next) => {
        setStatus(next)
        // Whatever happened while we were away and the log cannot replay is fetched again.
        if (next === 'live') queryClient.invalidateQueries({ queryKey: ['sidebar'] })
      },
    })
    client.start()
    const online = () => client.reconnectNow()
    window.addEventListener('online', online)
    return () => {
      window.removeEventListener('online', online)
      client.stop()
    }
  }, [enabled, session.token, session.user_id, queryClient])
  return <LiveStatus.Provider value={status}>{children}</LiveStatus.Provider>
}
