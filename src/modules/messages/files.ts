// Uploaded files on the local disk. The server chooses every stored name (a fresh UUIDv7), so
// nothing the client sends reaches a path. A file is written while it streams in and counted
// against the limit as it goes; on any failure the partial file is removed.
import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream, type ReadStream } from 'node:fs'
import { mkdir, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { Transform, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { uuidv7 } from '../../lib/ids.ts'

export interface StoredFile {
  storageName: string
  size: number
  sha256: string
}

/**
 * Creates the upload folder, private to the server's user and group. Only the folder itself gets
 * that mode: a recursive mkdir would give it to new parents too, and DATA_DIR must stay
 * reachable by the embedded PostgreSQL, which runs as another user when the server runs as root.
 */
export async function ensureUploadDir(dir: string): Promise<void> {
  await mkdir(path.dirname(dir), { recursive: true })
  await mkdir(dir, { mode: 0o750 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error
  })
}

export function filePath(dir: string, storageName: string): string {
  // storageName is always ours (a UUID); basename() is a second guard.
  return path.join(dir, path.basename(storageName))
}

/** Streams `source` to a new file; rejects (leaving no file) if the stream fails or is cut. */
export async function saveUpload(dir: string, source: Readable & { truncated?: boolean }): Promise<StoredFile> {
  const storageName = uuidv7()
  const target = filePath(dir, storageName)
  const hash = createHash('sha256')
  let size = 0
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length
      hash.update(chunk)
      done(null, chunk)
    },
  })
  try {
    await pipeline(source, counter, createWriteStream(target, { flags: 'wx', mode: 0o640 }))
    if (source.truncated) throw Object.assign(new Error('file is larger than the limit'), { code: 'FST_REQ_FILE_TOO_LARGE', statusCode: 413 })
  } catch (error) {
    await rm(target, { force: true })
    throw error
  }
  return { storageName, size, sha256: hash.digest('hex') }
}

/** Removes stored files; a file already gone is fine. */
export async function removeFiles(dir: string, storageNames: string[]): Promise<void> {
  await Promise.all(storageNames.map((name) => rm(filePath(dir, name), { force: true })))
}

export async function openFile(dir: string, storageName: string): Promise<{ stream: ReadStream; size: number } | null> {
  const file = filePath(dir, storageName)
  const info = await stat(file).catch(() => null)
  if (!info?.isFile()) return null
  return { stream: createReadStream(file), size: info.size }
}

/** The client's file name reduced to a safe display name: no directories, no control characters. */
export function cleanFileName(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? ''
  const cleaned = base
    // eslint-disable-next-line no-control-regex -- stripping control characters is the point
    .replace(/[\u0000-\u001f\u007f"]/g, '')
    .trim()
    .slice(0, 255)
  return cleaned && cleaned !== '.' && cleaned !== '..' ? cleaned : 'file'
}

/** A media type as declared, if it looks like one; otherwise application/octet-stream. */
export function cleanContentType(type: string | undefined): string {
  const t = (type ?? '').trim().toLowerCase()
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/.test(t) ? t : 'application/octet-stream'
}

/** Content-Disposition that always downloads: an ASCII fallback plus the RFC 5987 UTF-8 name. */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_')
  const encoded = encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`
}
