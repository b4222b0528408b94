// Delivery history of a webhook or an integration: newest first, older pages on demand, a status
// filter, and "Send again" for one delivery. Refreshed every few seconds while open, so a retry
// or a redelivery shows its outcome without a reload.
import { useId, useState } from 'react'
import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { eventLabel, formatWhen } from './format.ts'
import { Empty, LoadFailed, Loading } from './QueryState.tsx'

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed'

export interface Delivery {
  id: string
  event_type: string
  status: DeliveryStatus
  attempts: number
  last_status_code: number | null
  last_error: string | null
  next_attempt_at: string | null
  created_at: string
  completed_at: string | null
}

export interface DeliveryPage {
  deliveries: Delivery[]
  has_more: boolean
  next_before: string | null
}

const STATUS_WORDS: Record<DeliveryStatus, string> = { pending: 'Pending', succeeded: 'Delivered', failed: 'Failed' }

function outcome(d: Delivery): string {
  if (d.status === 'pending') {
    if (d.attempts === 0) return 'Waiting to be sent'
    return `Will retry${d.next_attempt_at ? ` at ${formatWhen(d.next_attempt_at)}` : ''}${d.last_status_code ? ` (last answer: HTTP ${d.last_status_code})` : ''}`
  }
  if (d.status === 'succeeded') return d.last_status_code ? `Answered HTTP ${d.last_status_code}` : 'Delivered'
  return d.last_error ?? (d.last_status_code ? `Answered HTTP ${d.last_status_code}` : 'No answer')
}

export function DeliveryHistory({
  kind,
  queryKey,
  fetchPage,
  redeliver,
  active,
}: {
  kind: string
  queryKey: readonly unknown[]
  fetchPage: (before: string | undefined, status: DeliveryStatus | undefined) => Promise<DeliveryPage>
  redeliver: (deliveryId: string) => Promise<unknown>
  active: boolean
}) {
  const queryClient = useQueryClient()
  const [status, setStatus] = useState<DeliveryStatus | ''>('')
  const showId = useId()
  const key = [...queryKey, status]
  const history = useInfiniteQuery({
    queryKey: key,
    queryFn: ({ pageParam }) => fetchPage(pageParam, status || undefined),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => (last.has_more && last.next_before ? last.next_before : undefined),
    refetchInterval: 5_000,
  })
  const again = useMutation({
    mutationFn: redeliver,
    onSuccess: () => queryClient.invalidateQueries({ queryKey }),
  })
  const deliveries = history.data?.pages.flatMap((p) => p.deliveries) ?? []
  return (
    <div className="deliveries stack">
      <div className="deliveries-head">
        <h4>Delivery history</h4>
        <div className="compact-label">
          <label htmlFor={showId}>Show</label>
          <select id={showId} value={status} onChange={(e) => setStatus(e.target.value as DeliveryStatus | '')}>
            <option value="">All deliveries</option>
            <option value="failed">Failed</option>
            <option value="pending">Pending</option>
            <option value="succeeded">Delivered</option>
          </select>
        </div>
      </div>
      {!active && <p className="muted small">Turn the {kind} back on to send deliveries again.</p>}
      {history.isPending && <Loading what="deliveries" />}
      {history.isError && <LoadFailed what="the delivery history" error={history.error} retry={() => void history.refetch()} />}
      {history.isSuccess && deliveries.length === 0 && <Empty>{status ? 'No deliveries with this status.' : `No deliveries yet. One appears here each time a subscribed event happens.`}</Empty>}
      {deliveries.length > 0 && (
        <ol className="plain-list delivery-list" aria-label="Deliveries, newest first">
          {deliveries.map((d) => (
            <li key={d.id} className="delivery" data-testid="delivery">
              <div className="delivery-main">
                <span className={`pill pill-${d.status}`}>{STATUS_WORDS[d.status]}</span>
                <span className="delivery-event">{eventLabel(d.event_type)}</span>
                <span className="muted small">
                  <code>{d.event_type}</code> · {formatWhen(d.created_at)}
                </span>
              </div>
              <div className="delivery-detail small">
                <span>
                  {d.attempts} {d.attempts === 1 ? 'attempt' : 'attempts'}
                </span>
                <span className="delivery-outcome">{outcome(d)}</span>
                {d.status !== 'pending' && (
                  <button
                    type="button"
                    className="secondary small push-end"
                    disabled={!active || (again.isPending && again.variables === d.id)}
                    aria-label={`Send again: the ${d.event_type} delivery of ${formatWhen(d.created_at)}`}
                    onClick={() => again.mutate(d.id)}
                  >
                    {again.isPending && again.variables === d.id ? 'Sending…' : 'Send again'}
                  </button>
                )}
              </div>
            </li>
          ))}
        </ol>
      )}
      <ErrorNote error={again.error} sentences={{ CONFLICT: `The ${kind} is turned off: turn it back on, then send the delivery again.`, NOT_FOUND: 'That delivery no longer exists.' }} />
      {history.hasNextPage && (
        <div>
          <button type="button" className="secondary" onClick={() => void history.fetchNextPage()} disabled={history.isFetchingNextPage}>
            {history.isFetchingNextPage ? 'Loading…' : 'Show older deliveries'}
          </button>
        </div>
      )}
    </div>
  )
}
