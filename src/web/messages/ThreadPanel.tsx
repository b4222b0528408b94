// A thread beside the conversation (full screen on a phone): its root, its replies oldest to
// newest (older ones on demand), and a composer that replies in the thread. Live replies join it
// through the LiveContext (threads.ts); Escape or the close button returns to the conversation.
import { useEffect, useLayoutEffect, useMemo, useRef, type KeyboardEvent } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { useDraft } from './drafts.ts'
import { MessageItem } from './MessageItem.tsx'
import { ThreadStatusBar } from './ThreadStatusBar.tsx'
import { postReply, threadKeys, useMessage } from './queries.ts'
import { InThreadPanel, useReplies } from './threads.ts'

const SENTENCES = {
  THREAD_NOT_ROOT: 'This message is itself a reply; reply in the thread it belongs to.',
  NOT_FOUND: 'This thread is gone: its message was deleted.',
}

export function ThreadPanel({
  channelId,
  place,
  rootId,
  readOnly,
  onClose,
}: {
  channelId: string
  /** Where the thread is: "#general", or the other person of a DM. */
  place: string
  rootId: string
  readOnly: string | null
  onClose: () => void
}) {
  const root = useMessage(channelId, rootId)
  const replies = useReplies(channelId, rootId)
  const oldestFirst = useMemo(() => (replies.data?.pages.flatMap((page) => page.messages) ?? []).slice().reverse(), [replies.data])
  const scroller = useRef<HTMLDivElement>(null)
  const heading = useRef<HTMLHeadingElement>(null)
  // Opening a thread moves the focus into it: into its composer, so what one types goes there
  // (the heading when one may not reply), once the thread has loaded.
  const loaded = root.isSuccess
  useEffect(() => {
    if (!loaded) return
    const box = document.getElementById('thread-composer-text')
    ;(box ?? heading.current)?.focus()
  }, [rootId, loaded])
  // The newest reply stays in view as replies arrive.
  const newest = oldestFirst.at(-1)?.id
  useLayoutEffect(() => {
    const el = scroller.current
    if (el) el.scrollTop = el.scrollHeight
  }, [newest])
  const onKeyDown = (event: KeyboardEvent) => {
    // Escape in a message's editor cancels the edit only.
    if (event.key === 'Escape' && !(event.target as HTMLElement).closest('.edit-box')) onClose()
  }
  const count = root.data?.reply_count ?? oldestFirst.length
  return (
    <aside className="thread-panel" aria-labelledby="thread-title" onKeyDown={onKeyDown} data-testid="thread-panel">
      <header className="thread-header">
        <h2 id="thread-title" ref={heading} tabIndex={-1}>
          Thread <span className="muted small thread-place">{place}</span>
        </h2>
        <button type="button" className="icon-button thread-close" onClick={onClose} aria-label="Close the thread">
          <span aria-hidden="true">×</span>
        </button>
      </header>
      <div className="thread-scroller" ref={scroller} tabIndex={0} role="log" aria-label="Thread replies" aria-busy={root.isPending || replies.isPending}>
        <InThreadPanel.Provider value={true}>
          {root.isPending && <p className="muted pad">Loading the thread…</p>}
          <ErrorNote error={root.error ?? replies.error} sentences={SENTENCES} />
          {root.data && <MessageItem message={root.data} />}
          {root.data && (
            <div className="thread-divider" role="separator" aria-label={count === 1 ? '1 reply' : `${count} replies`}>
              <span>{count === 0 ? 'No replies yet' : count === 1 ? '1 reply' : `${count} replies`}</span>
            </div>
          )}
          {replies.hasNextPage && (
            <button type="button" className="link-button small load-older-replies" disabled={replies.isFetchingNextPage} onClick={() => void replies.fetchNextPage()}>
              {replies.isFetchingNextPage ? 'Loading older replies…' : 'Load older replies'}
            </button>
          )}
          {oldestFirst.map((reply) => (
            <MessageItem key={reply.id} message={reply} />
          ))}
          {root.data && <ThreadStatusBar channelId={channelId} rootId={rootId} read={true} />}
        </InThreadPanel.Provider>
      </div>
      {root.data && <ThreadComposer channelId={channelId} rootId={rootId} readOnly={readOnly} />}
    </aside>
  )
}

function ThreadComposer({ channelId, rootId, readOnly }: { channelId: string; rootId: string; readOnly: string | null }) {
  const queryClient = useQueryClient()
  const [text, setText] = useDraft(`t:${rootId}`)
  const input = useRef<HTMLTextAreaElement>(null)
  const send = useMutation({
    mutationFn: (draft: { text: string; key: string }) => postReply(channelId, rootId, draft),
    onMutate: () => setText(''),
    // The draft comes back, with whatever was typed meanwhile after it.
    onError: (_error, draft) => setText((typed) => (typed ? `${draft.text}\n${typed}` : draft.text)),
    // The live event adds the reply; fetching the thread again covers a connection that is down.
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: threadKeys.replies(channelId, rootId) })
      input.current?.focus()
    },
  })
  if (readOnly) {
    return (
      <div className="composer composer-readonly">
        <p>{readOnly}</p>
      </div>
    )
  }
  const submit = () => {
    if (send.isPending || !text.trim()) return
    send.mutate({ text, key: crypto.randomUUID() })
  }
  return (
    <form
      className="composer thread-composer"
      onSubmit={(e) => {
        e.preventDefault()
        submit()
      }}
    >
      {send.error ? (
        <div className="not-sent" role="alert">
          <span>Not sent. </span>
          <ErrorNote error={send.error} sentences={SENTENCES} />
        </div>
      ) : null}
      <div className="composer-row">
        <label htmlFor="thread-composer-text" className="visually-hidden">
          Reply in thread
        </label>
        <textarea
          id="thread-composer-text"
          ref={input}
          rows={1}
          placeholder="Reply in thread…"
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
              event.preventDefault()
              submit()
            }
          }}
        />
        <button type="submit" className="primary" disabled={send.isPending || !text.trim()}>
          {send.isPending ? 'Sending…' : 'Reply'}
        </button>
      </div>
    </form>
  )
}
