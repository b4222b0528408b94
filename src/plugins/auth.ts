// Authentication: `Authorization: Bearer <credential>` where the credential is an agent API key
// (svc_…), an integration key (svc_int_…) or a human JWT (HS256, 24 h). Each /api route must
// declare who may call it in `config.auth` (the app refuses to start otherwise); routes outside
// /api without a policy (Swagger UI's assets) are public. The same `authenticate` serves the
// WebSocket gateway. Every 401 carries a Bearer challenge (RFC 6750) pointing at the protected
// resource metadata (RFC 9728, GET /.well-known/oauth-protected-resource), which says that the
// resource takes bearer API keys and JWTs and names no authorization server.
import jwt from '@fastify/jwt'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { AppError, forbidden, unauthorized } from '../lib/errors.ts'
import { API_KEY_PREFIX, INTEGRATION_KEY_PREFIX, safeEqual, sha256Hex } from '../lib/tokens.ts'
import { userById } from '../modules/accounts/service.ts'
import { agentKeyLookup } from '../modules/agents/service.ts'
import { integrationByKeyHash } from '../modules/integrations/service.ts'
import type { HeldCredential } from '../modules/identity/held.ts'
import { isOwner, type MemberPrincipal, type Principal } from '../modules/identity/principal.ts'
import { registerKeyCache, type CachedKey } from './key-cache.ts'

export type AuthPolicy =
  | 'public' // no credential
  | 'any' // an agent key or a human JWT
  | 'human' // a human JWT
  | 'owner' // the workspace owner's JWT
  | 'integration' // an integration key

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthPolicy
  }
  interface FastifyRequest {
    /** Set on every route whose policy is not 'public'. */
    principal: Principal
  }
  interface FastifyInstance {
    authenticate: (credential: string | undefined) => Promise<Principal | null>
    /**
     * The caller of a request (null: no valid credential), looked up once per request: the rate
     * limit (which runs first, to tell anonymous traffic apart) and the route policy share it.
     */
    principalOf: (request: FastifyRequest) => Promise<Principal | null>
    /** A session for the user; `sessionVersion` is the user's current one (users.session_version, 0 for a new user). */
    signUserToken: (userId: string, sessionVersion?: number) => string
  }
}

declare module '@fastify/jwt' {
  interface FastifyJWT {
    /** `ver`: the user's session version when the token was issued (absent in older tokens: 0). */
    payload: { sub: string; typ: 'human'; ver?: number }
    user: { sub: string; typ: 'human'; ver?: number }
  }
}

export const JWT_ISSUER = 'agent-messaging-service'
/** The realm of our Bearer challenges. */
export const REALM = 'agent-messaging-service'
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource'

/**
 * `WWW-Authenticate` of every 401 (RFC 6750, RFC 9728 `resource_metadata`): `error="invalid_token"`
 * when a bearer credential was sent, no error code when none was (RFC 6750 section 3.1).
 */
export function bearerChallenge(publicUrl: string, credentialGiven: boolean): string {
  const error = credentialGiven ? ', error="invalid_token"' : ''
  return `Bearer realm="${REALM}", resource_metadata="${publicUrl}${RESOURCE_METADATA_PATH}"${error}`
}

/**
 * RFC 9728 protected resource metadata. No `authorization_servers`: no OAuth server issues tokens
 * for this resource; the bearer credential is an agent API key or a human JWT from the login.
 */
export function resourceMetadata(publicUrl: string, resource = publicUrl): Record<string, unknown> {
  return {
    resource,
    resource_name: 'Agent Messaging Service',
    resource_documentation: `${publicUrl}/docs`,
    bearer_methods_supported: ['header'],
    bearer_credentials:
      'Authorization: Bearer <credential>, where the credential is an agent API key (svc_…, created by the workspace owner or at bootstrap) or a human JWT from POST /api/v1/auth/login. No OAuth authorization server issues tokens for this resource.',
  }
}
export const JWT_TTL = '24h'

/** The request's credential: the Bearer header, or the WebSocket upgrade's `?token=`. */
function credentialOf(request: FastifyRequest): string | undefined {
  const header = bearer(request)
  if (header || request.routeOptions.url !== '/ws') return header
  const token = (request.query as { token?: unknown } | undefined)?.token
  // Keys are base64: a `+` that was not URL-encoded arrives as a space (as in the gateway).
  return typeof token === 'string' && token ? token.replaceAll(' ', '+') : undefined
}

/** The one route an account awaiting the owner's approval may call (GET only: not PATCH). */
const ME_ROUTE = '/api/v1/auth/me'
const pendingMayCall = (request: FastifyRequest): boolean => request.routeOptions.url === ME_ROUTE && request.method === 'GET'

export const approvalPending = (): AppError => new AppError('APPROVAL_PENDING', "this account awaits the workspace owner's approval; until then only GET /api/v1/auth/me answers")

export function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  if (!header) return undefined
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  return match?.[1]
}

async function authPlugin(app: FastifyInstance, opts: { jwtSecret: string; keyCacheTtlMs: number }): Promise<void> {
  await app.register(jwt, {
    secret: opts.jwtSecret,
    sign: { algorithm: 'HS256', expiresIn: JWT_TTL, iss: JWT_ISSUER },
    verify: { algorithms: ['HS256'], allowedIss: JWT_ISSUER },
  })

  const { prisma, pool } = app.db

  // Every agent request starts here: one batched prepared statement (the agents module), and recent
  // keys cached without weakening revocation (src/plugins/key-cache.ts).
  const findAgentKey = agentKeyLookup(pool)
  const keyCache = registerKeyCache(app, opts.keyCacheTtlMs)

  async function lookUpAgentKey(hash: string): Promise<CachedKey | undefined> {
    const cached = keyCache.get(hash)
    if (cached) return cached
    const token = keyCache.token()
    const row = await findAgentKey(hash)
    if (!row || row.revoked) return undefined
    const key = { keyId: row.keyId, keyHash: row.keyHash, agentId: row.agentId, name: row.name, displayName: row.displayName }
    keyCache.remember(hash, key, token)
    return key
  }

  async function authenticateAgentKey(key: string): Promise<Principal | null> {
    const hash = sha256Hex(key)
    const found = await lookUpAgentKey(hash)
    if (!found || !safeEqual(found.keyHash, hash)) return null
    return { kind: 'agent', id: found.agentId, name: found.name, displayName: found.displayName, keyId: found.keyId }
  }

  async function authenticateIntegrationKey(key: string): Promise<Principal | null> {
    const hash = sha256Hex(key)
    const row = await integrationByKeyHash(prisma, hash)
    if (!row || !safeEqual(row.keyHash, hash)) return null
    return { kind: 'integration', id: row.id }
  }

  async function authenticateJwt(token: string): Promise<Principal | null> {
    let claims: { sub?: unknown; typ?: unknown; ver?: unknown }
    try {
      claims = app.jwt.verify<{ sub?: unknown; typ?: unknown; ver?: unknown }>(token)
    } catch {
      return null
    }
    if (typeof claims.sub !== 'string' || claims.typ !== 'human') return null
    // A failed lookup (database down) propagates: it answers 503, never 401 (which a client
    // would take as "log out").
    const user = await userById(prisma, claims.sub)
    if (!user || user.status !== 'active') return null
    // A password change ends the sessions issued before it (docs/decisions.md, "People").
    if ((typeof claims.ver === 'number' ? claims.ver : 0) !== user.sessionVersion) return null
    return {
      kind: 'human',
      id: user.id,
      email: user.email,
      displayName: user.displayName,
      role: user.role,
      isOwner: user.isOwner,
      avatarUrl: user.avatarUrl,
      awaitingApproval: user.awaitingApproval,
    }
  }

  app.decorate('authenticate', async (credential: string | undefined): Promise<Principal | null> => {
    if (!credential || credential.length > 4096) return null
    if (credential.startsWith(INTEGRATION_KEY_PREFIX)) return authenticateIntegrationKey(credential)
    if (credential.startsWith(API_KEY_PREFIX)) return authenticateAgentKey(credential)
    if (credential.split('.').length === 3) return authenticateJwt(credential)
    return null
  })

  const resolved = new WeakMap<FastifyRequest, Promise<Principal | null>>()
  app.decorate('principalOf', (request: FastifyRequest): Promise<Principal | null> => {
    let principal = resolved.get(request)
    if (!principal) {
      principal = app.authenticate(credentialOf(request))
      resolved.set(request, principal)
    }
    return principal
  })

  // Every 401 of the service (REST, the WebSocket upgrade, /mcp, metrics) challenges for a bearer
  // credential, so that clients ask for a key instead of starting an OAuth flow.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode === 401 && !reply.hasHeader('www-authenticate')) reply.header('www-authenticate', bearerChallenge(app.config.publicUrl, credentialOf(request) !== undefined))
    done(null, payload)
  })

  // The metadata, at the root (the resource is the service) and path-inserted for /mcp (RFC 9728
  // section 3.1: an MCP client looks there first for the resource PUBLIC_URL/mcp).
  const metadataRoute = (url: string, resource: string) =>
    app.get(url, { schema: { hide: true }, config: { auth: 'public' } }, async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=3600')
      return resourceMetadata(app.config.publicUrl, resource)
    })
  metadataRoute(RESOURCE_METADATA_PATH, app.config.publicUrl)
  metadataRoute(`${RESOURCE_METADATA_PATH}/mcp`, `${app.config.publicUrl}/mcp`)

  app.decorate('signUserToken', (userId: string, sessionVersion = 0) => app.jwt.sign({ sub: userId, typ: 'human', ver: sessionVersion }))
  app.decorateRequest('principal', null as never)

  // Documents each route's credential in OpenAPI and adds the 401/403 answers it can give.
  app.addHook('onRoute', (route) => {
    const policy = route.config?.auth
    if (!policy && route.url.startsWith('/api/')) throw new Error(`route ${route.method} ${route.url} declares no config.auth policy`)
    if (!policy || policy === 'public' || !route.schema || route.schema.hide) return
    const schema = route.schema as Record<string, unknown> & { response?: Record<string, unknown> }
    schema.security ??= [{ bearerAuth: [] }]
    schema.response ??= {}
    schema.response[401] ??= {
      description: 'Missing, invalid, expired or revoked credentials (`UNAUTHORIZED`).',
      content: { 'application/json': { schema: { $ref: 'Error#' } } },
      headers: { 'WWW-Authenticate': { type: 'string', description: 'A Bearer challenge (RFC 6750) naming the resource metadata (RFC 9728); `error="invalid_token"` when a credential was sent.' } },
    }
    // Every route a human may call can refuse an account awaiting approval (APPROVAL_PENDING).
    if (policy === 'owner' || policy === 'human' || policy === 'any') schema.response[403] ??= { $ref: 'Error#' }
  })

  app.addHook('onRequest', async (request) => {
    const policy = request.routeOptions.config?.auth
    if (!policy || policy === 'public' || request.is404) return
    const principal = await app.principalOf(request)
    if (!principal) throw unauthorized()
    request.principal = principal
    if (principal.kind === 'human' && principal.awaitingApproval && !pendingMayCall(request)) throw approvalPending()
    switch (policy) {
      case 'integration':
        if (principal.kind !== 'integration') throw unauthorized('this endpoint takes an integration key (svc_int_…)')
        return
      case 'any':
        if (principal.kind === 'integration') throw unauthorized('integration keys are accepted only by the inbound endpoint')
        return
      case 'human':
        if (principal.kind === 'integration') throw unauthorized('integration keys are accepted only by the inbound endpoint')
        if (principal.kind !== 'human') throw forbidden('this action requires a human user (JWT)')
        return
      case 'owner':
        if (principal.kind === 'integration') throw unauthorized('integration keys are accepted only by the inbound endpoint')
        if (!isOwner(principal)) throw forbidden('only the workspace owner (a human admin with a JWT) may do this')
        return
      default:
        throw new AppError('INTERNAL_ERROR', `unknown auth policy ${String(policy)}`)
    }
  })
}

export default fp(authPlugin, { name: 'auth', dependencies: ['db', 'redis'] })

/**
 * What a connection held open keeps of the credential it was opened with, for the periodic
 * re-check (src/modules/identity/held.ts): a JWT's expiry and session version, read from the
 * token that just authenticated.
 */
export function heldCredential(app: FastifyInstance, principal: MemberPrincipal, token: string | undefined): HeldCredential {
  if (principal.kind !== 'human') return { principal, expiresAt: null, sessionVersion: null }
  const claims = app.jwt.decode<{ exp?: number; ver?: number }>(token ?? '')
  return { principal, expiresAt: typeof claims?.exp === 'number' ? claims.exp * 1000 : null, sessionVersion: typeof claims?.ver === 'number' ? claims.ver : 0 }
}
