// The composer: Enter sends, Shift+Enter starts a new line; a file attached by the button or by
// dropping it on the conversation, refused before upload when over 10 MB, with the upload's
// progress shown while it goes. The box clears the moment a message is sent, as in any chat
// client. Nothing is silently lost: text written while the connection is down waits in the
// outbox (shown above the box) and goes out when it is back; a message the server refuses, or a
// file that cannot be sent, comes back into the box marked as not sent, with a retry.
import { useEffect, useRef, useState, type DragEvent, type KeyboardEvent } from 'react'
import { useMutation } from '@tanstack/react-query'
import { ApiError } from '../api/errors.ts'
import { useMentionAutocomplete } from '../mentions/MentionAutocomplete.tsx'
import { useSendTyping } from '../live/LiveContext.tsx'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { PaperclipIcon } from '../ui/PaperclipIcon.tsx'
import { useDraft } from './drafts.ts'
import { formatSize } from './format.ts'
import { parseMarkdown, renderMarkdown } from './Markdown.tsx'
import { enqueue, isTransient, postText } from './outbox.ts'
import { Outbox } from './Outbox.tsx'
import { uploadMessage, type Upload } from './upload.ts'

export const MAX_FILE_BYTES = 10 * 1024 * 1024

interface Draft {
  text: string
  file: File | null
  key: string
}

export function Composer({ channelId, title, readOnly, onSent }: { channelId: string; title: string; readOnly: string | null; onSent?: () => void }) {
  const sendTyping = useSendTyping()
  const [text, setText] = useDraft(`c:${channelId}`)
  const [file, setFile] = useState<File | null>(null)
  const [fileProblem, setFileProblem] = useState<string | null>(null)
  const [dragging, setDragging] = useState(false)
  const [progress, setProgress] = useState(0)
  // Why the last message came back into the box, until the next attempt.
  const [notSent, setNotSent] = useState<unknown>(null)
  const [preview, setPreview] = useState(false)
  const upload = useRef<Upload | null>(null)
  const input = useRef<HTMLTextAreaElement>(null)
  const picker = useRef<HTMLInputElement>(null)
  const mention = useMentionAutocomplete(channelId, text, setText, input)

  // Arriving from "New direct message": the person came here to write.
  useEffect(() => {
    if ((history.state as { focusComposer?: boolean } | null)?.focusComposer) input.current?.focus()
  }, [])

  const send = useMutation({
    // Offline is handled here (the outbox, or "not sent"), not by pausing the mutation until the
    // browser is back online, which would leave the person looking at "Uploading…".
    networkMode: 'always',
    mutationFn: async (draft: Draft) => {
      if (!draft.file) return postText(channelId, draft.text, draft.key)
      if (!navigator.onLine) throw new ApiError(0, 'NETWORK', 'offline')
      setProgress(0)
      upload.current = uploadMessage(channelId, { text: draft.text, file: draft.file }, draft.key, setProgress)
      try {
        return await upload.current.done
      } finally {
        upload.current = null
      }
    },
    onMutate: () => {
      setText('')
      setFile(null)
      setNotSent(null)
    },
    onError: (error, draft) => {
      // Text only, and the connection is the problem: it waits in the outbox and goes out later.
      if (!draft.file && isTransient(error)) {
        enqueue(channelId, draft.text, draft.key)
        return
      }
      // Otherwise the draft comes back; whatever was typed meanwhile stays after it.
      setText((typed) => (typed ? `${draft.text}\n${typed}` : draft.text))
      setFile((chosen) => chosen ?? draft.file)
      if (!(error instanceof ApiError && error.code === 'CANCELLED')) setNotSent(error)
    },
    // One's own message changes no unread count: the sidebar is left alone.
    onSuccess: () => {
      input.current?.focus()
      onSent?.()
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
    // Offline, text is not even tried: it goes straight to the outbox.
    if (!file && !navigator.onLine) {
      enqueue(channelId, text)
      setText('')
      setNotSent(null)
      return
    }
    send.mutate({ text, file, key: crypto.randomUUID() })
  }
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (mention.onKeyDown(event)) return
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
  const uploading = send.isPending && send.variables.file
  const percent = Math.round(progress * 100)
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
      <Outbox channelId={channelId} onEdit={(queued) => setText((typed) => (typed ? `${queued}\n${typed}` : queued))} />
      {file && (
        <p className="pending-file">
          <PaperclipIcon /> {file.name} <span className="muted small">{formatSize(file.size)}</span>
          <button type="button" className="link-button small" onClick={() => setFile(null)} aria-label={`Remove ${file.name}`}>
            Remove
          </button>
        </p>
      )}
      {uploading && (
        <div className="upload-progress" data-testid="upload-progress">
          <PaperclipIcon />
          <span className="attachment-name">{send.variables.file!.name}</span>
          <progress max={100} value={percent} aria-label={`Uploading ${send.variables.file!.name}`} />
          <span className="muted small" aria-hidden="true">
            {percent}%
          </span>
          <button type="button" className="link-button small" onClick={() => upload.current?.cancel()}>
            Cancel upload
          </button>
        </div>
      )}
      {fileProblem && (
        <p className="error-note" role="alert">
          {fileProblem}
        </p>
      )}
      {notSent ? (
        <div className="not-sent" role="alert">
          <span>Not sent. </span>
          <ErrorNote error={notSent} />
          <button type="button" className="link-button" onClick={submit}>
            Retry
          </button>
        </div>
      ) : null}
      {mention.listbox}
      {preview && (
        <div className="composer-preview" data-testid="composer-preview" aria-label="Preview" role="region">
          {text.trim() ? <div className="message-text">{renderMarkdown(parseMarkdown(text), (t) => t)}</div> : <p className="muted small">Nothing to preview yet.</p>}
        </div>
      )}
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
          onChange={(e) => {
            setText(e.target.value)
            mention.onCaret(e.target.selectionStart)
            if (e.target.value.trim()) sendTyping(channelId)
          }}
          onKeyDown={onKeyDown}
          {...mention.inputProps}
        />
        <button type="submit" className="primary" disabled={send.isPending || (!text.trim() && !file)}>
          {send.isPending ? (send.variables.file ? 'Uploading…' : 'Sending…') : 'Send'}
        </button>
      </div>
      <p className="muted small composer-hint">
        <span className="composer-keys">Enter to send · Shift+Enter for a new line · **bold**, _italic_, `code` · </span>
        <button type="button" className="link-button small" aria-pressed={preview} onClick={() => setPreview(!preview)}>
          Preview
        </button>
      </p>
    </form>
  )
}
