// Files for post_message: given inline (base64) or by URL. A URL is fetched by the server, so it
// goes through the same SSRF guard as webhook deliveries (src/lib/ssrf.ts, WEBHOOK_ALLOW_PRIVATE
// and WEBHOOK_ALLOW_HOSTS): http(s) only, no credentials, the resolved address checked on the
// connection itself, no redirects followed, MAX_FILE_BYTES counted as it streams to disk.
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import path from 'node:path'
import { Readable, Transform } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { AppError, badRequest } from '../lib/errors.ts'
import { isAllowedAddress, parseTargetUrl, safeLookup, UnsafeUrlError, type AddressPolicy } from '../lib/ssrf.ts'
import { cleanContentType, cleanFileName, saveUpload } from '../modules/messages/files.ts'
import type { UploadedFile } from '../modules/messages/service.ts'

export interface FileInput {
  url?: string
  base64?: string
  filename?: string
  content_type?: string
}

const FETCH_TIMEOUT_MS = 15_000
const DOWNLOAD_LIMIT_MS = 60_000
const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/

const tooLarge = (max: number): AppError => new AppError('PAYLOAD_TOO_LARGE', `the file is larger than ${max} bytes (10 MiB)`)

/** Stores the file on disk like a multipart upload; the caller removes it if the post fails. */
export async function storeFile(app: FastifyInstance, input: FileInput): Promise<UploadedFile> {
  if (Boolean(input.url) === Boolean(input.base64)) throw badRequest("a file takes exactly one of 'url' or 'base64'")
  return input.base64 !== undefined ? storeBase64(app, input) : storeFromUrl(app, input)
}

async function storeBase64(app: FastifyInstance, input: FileInput): Promise<UploadedFile> {
  const text = input.base64!.replace(/\s+/g, '')
  if (!BASE64_RE.test(text) || text.length % 4 === 1) throw badRequest("'file.base64' is not valid base64")
  const bytes = Buffer.from(text, 'base64')
  if (bytes.length > app.config.maxFileBytes) throw tooLarge(app.config.maxFileBytes)
  const stored = await saveUpload(app.config.uploadDir, Readable.from([bytes]))
  return { ...stored, fileName: cleanFileName(input.filename), contentType: cleanContentType(input.content_type) }
}

function policyOf(app: FastifyInstance): AddressPolicy {
  return { allowPrivate: app.config.webhookAllowPrivate, allowHosts: app.config.webhookAllowHosts }
}

async function storeFromUrl(app: FastifyInstance, input: FileInput): Promise<UploadedFile> {
  const policy = policyOf(app)
  const max = app.config.maxFileBytes
  let url: URL
  try {
    url = parseTargetUrl(input.url!, policy)
    const host = url.hostname.replace(/^\[|\]$/g, '')
    if (net.isIP(host) && !isAllowedAddress(policy, host, host)) throw new UnsafeUrlError(`the address ${host} is not allowed`)
  } catch (error) {
    if (error instanceof UnsafeUrlError) throw new AppError('INVALID_URL', `file URL refused: ${error.message}`)
    throw error
  }
  const response = await get(url, policy)
  // The socket timeout catches a silent server; this bounds a slow trickle too.
  const deadline = setTimeout(() => response.destroy(new AppError('INVALID_URL', `the file took longer than ${DOWNLOAD_LIMIT_MS / 1000} s to download`)), DOWNLOAD_LIMIT_MS)
  try {
    const status = response.statusCode ?? 0
    if (status >= 300 && status < 400) throw new AppError('INVALID_URL', `the file URL answered a redirect (${status}); give the final URL`)
    if (status !== 200) throw new AppError('INVALID_URL', `the file URL answered HTTP ${status}`)
    const declared = Number(response.headers['content-length'])
    if (Number.isFinite(declared) && declared > max) throw tooLarge(max)
    let size = 0
    const limit = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length
        done(size > max ? tooLarge(max) : null, chunk)
      },
    })
    const stored = await saveUpload(app.config.uploadDir, response.pipe(limit)).catch((error: unknown) => {
      throw error instanceof AppError ? error : new AppError('INVALID_URL', 'the file could not be downloaded completely')
    })
    const fromUrl = decodeURIComponent(path.posix.basename(url.pathname) || '') || 'file'
    return { ...stored, fileName: cleanFileName(input.filename ?? fromUrl), contentType: cleanContentType(input.content_type ?? response.headers['content-type']?.split(';')[0]) }
  } finally {
    clearTimeout(deadline)
    response.destroy()
  }
}

function get(url: URL, policy: AddressPolicy): Promise<http.IncomingMessage> {
  const client = url.protocol === 'https:' ? https : http
  return new Promise((resolve, reject) => {
    const request = client.get(url, { lookup: safeLookup(policy), timeout: FETCH_TIMEOUT_MS, headers: { 'user-agent': 'agent-messaging-service (MCP file fetch)' } }, resolve)
    request.on('timeout', () => request.destroy(new AppError('INVALID_URL', `the file URL did not answer within ${FETCH_TIMEOUT_MS / 1000} s`)))
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error instanceof AppError) return reject(error)
      if (error.code === 'ERR_UNSAFE_ADDRESS') return reject(new AppError('INVALID_URL', `file URL refused: ${error.message}`))
      reject(new AppError('INVALID_URL', `the file URL could not be fetched (${error.code ?? 'network error'})`))
    })
  })
}
