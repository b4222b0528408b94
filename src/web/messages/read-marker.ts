// The read marker of the open conversation: the newest message on screen counts as read while the
// page is visible. A busy conversation moves it at most once per READ_EVERY_MS (to the newest
// message then, and once more on leaving), not once per message; the server's answer sets the
// sidebar's count, so nothing is refetched (the mentions badge only when the conversation may have
// held one: mentions/queries.ts).
import { useEffect, useRef } from 'react'
import { useQueryClient } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'
import { readMarked } from '../channels/sidebar-state.ts'
import { conversationRead } from '../mentions/queries.ts'

export const READ_EVERY_MS = 3000

export function useReadMarker(channelId: string, newestId: string | undefined): void {
  const queryClient = useQueryClient()
  const newest = useRef(newestId)
  const state = useRef<{ sent: number; pending: string | null; timer: ReturnType<typeof setTimeout> | null; mark: () => void; flush: () => void } | null>(null)
  newest.current = newestId

  useEffect(() => {
    const s = { sent: 0, pending: null as string | null, timer: null as ReturnType<typeof setTimeout> | null, mark: () => {}, flush: () => {} }
    s.flush = () => {
      if (s.timer) clearTimeout(s.timer)
      s.timer = null
      const id = s.pending
      if (!id) return
      s.pending = null
      s.sent = Date.now()
      void unwrap(api.PUT('/api/v1/channels/{id}/read', { params: { path: { id: channelId } }, body: { message_id: id } })).then(
        (read) => {
          readMarked(queryClient, channelId, read)
          conversationRead(queryClient, channelId)
        },
        // Not marked now (offline, refused): the next message or visit tries again.
        () => undefined,
      )
    }
    s.mark = () => {
      if (!newest.current || document.visibilityState !== 'visible') return
      s.pending = newest.current
      const wait = s.sent + READ_EVERY_MS - Date.now()
      if (wait <= 0) s.flush()
      else s.timer ??= setTimeout(s.flush, wait)
    }
    state.current = s
    document.addEventListener('visibilitychange', s.mark)
    return () => {
      document.removeEventListener('visibilitychange', s.mark)
      // A mark still waiting goes out now: leaving the conversation must not lose it.
      if (s.timer) s.flush()
      state.current = null
    }
  }, [channelId, queryClient])

  useEffect(() => state.current?.mark(), [newestId])
}
