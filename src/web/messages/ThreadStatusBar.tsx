// What agents are doing in a thread before they answer there (issue 25: a status without a
// stream), shown under the root in the channel and at the end of the thread panel. Kept per root
// in the query cache: `thread_status` frames change it (live/streams.ts); the thread panel also
// reads it when it opens (a late joiner or a reload), the channel's list only shows what arrived
// live (one request per root shown would cost a page of requests for a rare status).
import { useThreadStatus } from './queries.ts'
import { StatusView } from './StreamBar.tsx'

export function ThreadStatusBar({ channelId, rootId, read }: { channelId: string; rootId: string; read: boolean }) {
  const statuses = useThreadStatus(channelId, rootId, read)
  if (!statuses.data?.length) return null
  return (
    <div className="thread-status" data-testid="thread-status">
      {statuses.data.map((entry) => (
        <StatusView key={entry.agent_id} status={entry.status} who={entry.agent_name} />
      ))}
    </div>
  )
}
