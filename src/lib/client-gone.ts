// An abort signal for a request whose client goes away. The response's 'close' also follows the
// answer (harmless: the work is done then). A client that left before the handler ran (while the
// request was authenticated or its body read) has closed already and fires nothing, so the
// socket's state is checked too: without it such a request would wait out its whole deadline.
import type { IncomingMessage, ServerResponse } from 'node:http'

export function clientGone(request: IncomingMessage, response: ServerResponse): AbortController {
  const gone = new AbortController()
  response.once('close', () => gone.abort())
  if (request.socket.destroyed || response.destroyed) gone.abort()
  return gone
}
