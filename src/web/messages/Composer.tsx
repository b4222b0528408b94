// The composer: Enter sends, Shift+Enter starts a new line; a file attached by the button or by
// dropping it on the conversation, refused before upload when over 10 MB. A message that could
// not be sent stays in the box, marked as not sent, with a retry; nothing is silently lost. The box
// clears the moment a message is sent (as in any chat client), and the draft comes back if sending
// fails.
import { useRef, useState, type DragEvent, type KeyboardEvent } from 'react'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api, unwrap } from '../api/client.ts'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { PaperclipIcon } from '../ui/PaperclipIcon.tsx'
import { formatSize } from './format.ts'

export const MAX_FILE_BYTES = 10 * 1024 * 1024

export function Composer({ channelId, title, readOnly }: { channelId: string; title: string; readOnly: string | null }) {
  const queryClient = useQueryClient()
  const [text, setText] = useState('')
  const [file, setFile] = useState<File | null>(null)
  const [fileProblem, setFileProblem] = useState<string | null>(null)
  const [dragging, setDragging] = useState(false)
  const input = useRef<HTMLTextAreaElement>(null)
  const picker = useRef<HTMLInputElement>(null)

  const send = useMutation({
    mutationFn: (draft: { text: string; file: File | null }) => {
      const params = { path: { id: channelId } }
      if (!draft.file) return unwrap(api.POST('/api/v1/channels/{id}/messages', { params, body: { text: draft.text } }))
      const form = new FormData()
      form.append('text', draft.text)
      form.append('file', draft.file, draft.file.name)
      return unwrap(api.POST('/api/v1/channels/{id}/messages', { params, body: { text: draft.text }, bodySerializer: () => form }))
    },
    onMutate: () => {
      setText('')
      setFile(null)
    },
    onError: (_error, draft) => {
      // whatever was typed meanwhile stays after the draft that failed
      setText((typed) => (typed ? `${draft.text}\n${typed}` : draft.text))
      setFile((chosen) => chosen ?? draft.file)
    },
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['sidebar'] })
      input.current?.focus()
    },
  })

  const choose = (chosen: File | undefined) => {
    if (!chosen) return
    if (chosen.size > MAX_FILE_BYTES) {
      setFile(null)
      setFileProblem(`“${chosen.name}” is ${formatSize(chosen.size)}; files can be at most 10 MB.`)
      return
    }
    setFileProblem(null)
    setFile(chosen)
  }

  if (readOnly) {
    return (
      <div className="composer composer-readonly" data-testid="composer-readonly">
        <p>{readOnly}</p>
      </div>
    )
  }

  const submit = () => {
    if (send.isPending) return
    if (!text.trim() && !file) return
    send.mutate({ text, file })
  }
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault()
      submit()
    }
  }
  const onDrop = (event: DragEvent) => {
    event.preventDefault()
    setDragging(false)
    choose(event.dataTransfer.files[0])
  }
  return (
    <form
      className={dragging ? 'composer dragging' : 'composer'}
      onSubmit={(e) => {
        e.preventDefault()
        submit()
      }}
      onDragOver={(e) => {
        e.preventDefault()
        setDragging(true)
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
    >
      {file && (
        <p className="pending-file">
          <PaperclipIcon /> {file.name} <span className="muted small">{formatSize(file.size)}</span>
          <button type="button" className="link-button small" onClick={() => setFile(null)} aria-label={`Remove ${file.name}`}>
            Remove
          </button>
        </p>
      )}
      {fileProblem && (
        <p className="error-note" role="alert">
          {fileProblem}
        </p>
      )}
      {send.error ? (
        <div className="not-sent" role="alert">
          <span>Not sent. </span>
          <ErrorNote error={send.error} />
          <button type="button" className="link-button" onClick={submit}>
            Retry
          </button>
        </div>
      ) : null}
      <div className="composer-row">
        <button type="button" className="icon-button" onClick={() => picker.current?.click()} aria-label="Attach a file (up to 10 MB)" title="Attach a file (up to 10 MB)">
          <PaperclipIcon />
        </button>
        <input
          ref={picker}
          type="file"
          hidden
          data-testid="file-input"
          onChange={(e) => {
            choose(e.target.files?.[0])
            e.target.value = ''
          }}
        />
        <label htmlFor="composer-text" className="visually-hidden">
          Message {title}
        </label>
        <textarea
          id="composer-text"
          ref={input}
          rows={1}
          placeholder={`Message ${title}`}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={onKeyDown}
        />
        <button type="submit" className="primary" disabled={send.isPending || (!text.trim() && !file)}>
          {send.isPending ? (send.variables.file ? 'Uploading…' : 'Sending…') : 'Send'}
        </button>
      </div>
      <p className="muted small composer-hint">Enter to send · Shift+Enter for a new line · drop a file to attach it</p>
    </form>
  )
}
