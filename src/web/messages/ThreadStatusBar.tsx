// What agents are doing in a thread before they answer there (issue 25: a status without a
// stream), shown under the root in the channel and at the end of the thread panel. Kept per root
// in the query cache: `thread_status` frames change it (live/streams.ts); the thread panel also
// reads it when it opens (a late joiner or a reload), the channel's list only shows what arrived
// live (one request per root shown would cost a page of requests for a rare status).
import { useQuery } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'
import { threadStatusKey, type ThreadStatusEntry } from '../live/streams.ts'
import { StatusView } from './StreamBar.tsx'

export function ThreadStatusBar({ channelId, rootId, read }: { channelId: string; rootId: string; read: boolean }) {
  const statuses = useQuery<ThreadStatusEntry[]>({
    queryKey: threadStatusKey(channelId, rootId),
    queryFn: async () => {
      const page = await unwrap(api.GET('/api/v1/channels/{id}/messages/{message_id}/thread/status', { params: { path: { id: channelId, message_id: rootId } } }))
      return page.statuses.map((s) => ({ agent_id: s.agent_id, agent_name: s.agent_name, status: s.status }))
    },
    enabled: read,
    staleTime: Infinity,
  })
  if (!statuses.data?.length) return null
  return (
    <div className="thread-status" data-testid="thread-status">
      {statuses.data.map((entry) => (
        <StatusView key={entry.agent_id} status={entry.status} who={entry.agent_name} />
      ))}
    </div>
  )
}
