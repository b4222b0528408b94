// A message's file: name, size and a download link. Downloads need the session's credential, so
// the file is fetched through the client and handed to the browser as an object URL; images are
// previewed inline the same way.
import { useEffect, useState } from 'react'
import { ErrorNote } from '../ui/ErrorNote.tsx'
import { PaperclipIcon } from '../ui/PaperclipIcon.tsx'
import { formatSize } from './format.ts'
import { fetchAttachment } from './queries.ts'
import type { Message } from './types.ts'

type File = NonNullable<Message['attachment']>

const PREVIEW_LIMIT = 5 * 1024 * 1024

export function Attachment({ attachment }: { attachment: File }) {
  const [error, setError] = useState<unknown>(null)
  const [preview, setPreview] = useState<string | null>(null)
  const isImage = /^image\/(png|jpeg|gif|webp)$/.test(attachment.content_type) && attachment.size <= PREVIEW_LIMIT
  useEffect(() => {
    if (!isImage) return
    let url: string | null = null
    let live = true
    fetchAttachment(attachment.id)
      .then((blob) => {
        if (!live) return
        url = URL.createObjectURL(new Blob([blob], { type: attachment.content_type }))
        setPreview(url)
      })
      .catch(() => undefined)
    return () => {
      live = false
      if (url) URL.revokeObjectURL(url)
    }
  }, [attachment.id, attachment.content_type, isImage])

  const download = async () => {
    setError(null)
    try {
      const blob = await fetchAttachment(attachment.id)
      const url = URL.createObjectURL(blob)
      const a = document.createElement('a')
      a.href = url
      a.download = attachment.file_name
      a.click()
      setTimeout(() => URL.revokeObjectURL(url), 10_000)
    } catch (e) {
      setError(e)
    }
  }
  return (
    <div className="attachment">
      {preview && <img src={preview} alt={attachment.file_name} className="attachment-preview" />}
      <div className="attachment-row">
        <PaperclipIcon />
        <span className="attachment-name">{attachment.file_name}</span>
        <span className="muted small">{formatSize(attachment.size)}</span>
        <button type="button" className="link-button small" onClick={download} aria-label={`Download ${attachment.file_name}`}>
          Download
        </button>
      </div>
      <ErrorNote error={error} />
    </div>
  )
}
