// The MCP endpoint: `/mcp` in this Fastify process, speaking protocol revision 2026-07-28 and the
// 2025 revisions (up to 2025-11-25) side by side, chosen per request by what the client declares:
// a request whose `_meta` names a 2026 revision goes to src/mcp/modern.ts (no sessions), anything
// else (`initialize`, a session's requests, GET and DELETE) to src/mcp/legacy.ts. The SDK's own
// classifier decides (`isLegacyRequest`), and the SDK answers every protocol-level error.
//
// In front of both, the API's own rules: the route's policy is 'any' (an agent key `svc_…` or a
// human JWT), checked by the auth plugin on every request before MCP sees it (401 carries
// `WWW-Authenticate: Bearer`, as everywhere: src/plugins/auth.ts); the workspace rate limit counts every request; a browser `Origin`
// outside MCP_ALLOWED_ORIGINS is refused with 403 (DNS rebinding); the body goes through the same
// input guard as every other route. Open sessions, waits and notification streams are cut when
// their credential is revoked (src/mcp/caller.ts). docs/mcp.md is the reference.
import { isLegacyRequest, originValidationResponse } from '@modelcontextprotocol/server'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { badRequest } from '../lib/errors.ts'
import { inputProblem } from '../lib/input-guard.ts'
import { bearer, heldCredential } from '../plugins/auth.ts'
import type { MemberPrincipal } from '../modules/identity/principal.ts'
import { LiveCallers } from './caller.ts'
import { jsonRpcError, requestAbort, requestIdOf, toWebRequest } from './http.ts'
import { Inbox } from './inbox.ts'
import { legacyMcp, type LegacyMcp } from './legacy.ts'
import { modernMcp, type ModernMcp } from './modern.ts'
import type { SessionRegistry } from './sessions.ts'
import { ChannelWatchers } from './watchers.ts'

export const MCP_PATH = '/mcp'
const INVALID_PARAMS = -32_602

declare module 'fastify' {
  interface FastifyInstance {
    mcp: { sessions: SessionRegistry; inbox: Inbox; watchers: ChannelWatchers; live: LiveCallers; modern: ModernMcp }
  }
}

function parseJson(text: string | undefined): unknown {
  if (!text) return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined // the SDK answers the parse error (-32700)
  }
}

async function mcpPlugin(app: FastifyInstance): Promise<void> {
  const { config } = app
  const inbox = new Inbox()
  const watchers = new ChannelWatchers(app)
  const live = new LiveCallers()
  const legacy: LegacyMcp = legacyMcp({ app, inbox, watchers, live })
  const modern: ModernMcp = modernMcp({ app, inbox, watchers, live })
  app.decorate('mcp', { sessions: legacy.sessions, inbox, watchers, live, modern })

  app.realtime.broker.onEntries((entries) => {
    inbox.dispatch(entries)
    watchers.dispatch(entries)
  })

  async function serve(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const text = typeof request.body === 'string' ? request.body : undefined
    const body = parseJson(text)
    // What no input may carry (NUL, lone surrogates, deep nesting), as for every other route.
    const problem = body === undefined ? null : inputProblem(body)
    if (problem) return reply.send(jsonRpcError(badRequest(`invalid input: ${problem}`), INVALID_PARAMS, requestIdOf(body)))
    const transport = requestAbort(reply)
    const web = toWebRequest(request, text, transport.signal)
    if (await isLegacyRequest(web, body)) return reply.send(await legacy.handle(request, reply, web, body))
    const principal = request.principal as MemberPrincipal
    const credential = bearer(request)!
    const caller = { principal, credential, held: heldCredential(app, principal, credential), closed: new AbortController() }
    return reply.send(await modern.handle(web, body, caller, transport))
  }

  // The /mcp routes live in their own context: the body reaches the SDK as it was sent (any media
  // type, malformed JSON included), so that the SDK answers in JSON-RPC, not the REST error format.
  // A base64 file of MAX_FILE_BYTES grows by 4/3 inside the JSON-RPC body.
  const bodyLimit = Math.ceil(config.maxFileBytes / 3) * 4 + config.bodyLimitBytes
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (_request, body, done) => done(null, body))
    scope.route({
      method: ['POST', 'GET', 'DELETE'],
      url: MCP_PATH,
      bodyLimit,
      config: { auth: 'any' },
      schema: { hide: true },
      // After authentication: a disallowed browser Origin is refused before MCP sees anything.
      onRequest: async (request, reply) => {
        const origin = request.headers.origin
        if (!origin || config.mcpAllowedOrigins.includes('*')) return
        const refused = originValidationResponse(new Request('http://mcp.invalid/', { headers: { origin } }), config.mcpAllowedOrigins)
        if (refused) return reply.send(refused)
      },
      handler: serve,
    })
  })

  const stopRecheck = live.startRecheck(app, config.mcpAuthRecheckMs)
  app.addHook('preClose', async () => {
    stopRecheck()
    await Promise.all([legacy.close(), modern.close()])
  })
}

export default fp(mcpPlugin, { name: 'mcp', dependencies: ['auth', 'realtime'] })
