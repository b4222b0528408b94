// Posting a message with a file, with upload progress. fetch() (and so the generated client) has
// no upload progress in browsers: a streaming request body would need HTTP/2 and duplex
// streams, and still reports what was handed to the network stack, not what the server took.
// XMLHttpRequest reports `upload.onprogress`, so this one request uses it (docs/decisions.md).
// It stays tied to the contract: the path is checked against the generated `paths`, the answer
// is typed as the generated Message, and failures become the same ApiError as everywhere else.
import type { paths } from '../../sdk/schema'
import { ApiError } from '../api/errors.ts'
import { getSession, signOut } from '../api/session.ts'
import type { Message } from './types.ts'

const POST_MESSAGE = '/api/v1/channels/{id}/messages' satisfies keyof paths

export interface Upload {
  done: Promise<Message>
  cancel: () => void
}

export function uploadMessage(channelId: string, draft: { text: string; file: File }, idempotencyKey: string, onProgress: (fraction: number) => void): Upload {
  const request = new XMLHttpRequest()
  const done = new Promise<Message>((resolve, reject) => {
    request.open('POST', POST_MESSAGE.replace('{id}', encodeURIComponent(channelId)))
    const token = getSession()?.token
    if (token) request.setRequestHeader('authorization', `Bearer ${token}`)
    request.setRequestHeader('idempotency-key', idempotencyKey)
    request.responseType = 'json'
    request.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total)
    }
    request.onload = () => {
      if (request.status === 201) {
        onProgress(1)
        resolve(request.response as Message)
        return
      }
      if (request.status === 401 && token) signOut('expired')
      const body = (request.response ?? {}) as { code?: unknown; error?: unknown }
      reject(new ApiError(request.status, typeof body.code === 'string' ? body.code : `HTTP_${request.status}`, typeof body.error === 'string' ? body.error : request.statusText))
    }
    request.onerror = () => reject(new ApiError(0, 'NETWORK', 'network error'))
    request.onabort = () => reject(new ApiError(0, 'CANCELLED', 'upload cancelled'))
    const form = new FormData()
    form.append('text', draft.text)
    form.append('file', draft.file, draft.file.name)
    request.send(form)
  })
  return { done, cancel: () => request.abort() }
}
