// DATA_DIR stays reachable by the embedded PostgreSQL, which runs as the "postgres" user when the
// server runs as root: creating the private upload folder must not make its parents private, and
// a DATA_DIR made private by an earlier version is opened for traversal (only).
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { letOthersTraverse } from '../../src/db/embedded.ts'
import { ensureUploadDir } from '../../src/modules/messages/files.ts'

const modeOf = async (p: string): Promise<number> => (await stat(p)).mode & 0o777

t.test('the upload folder is private; the DATA_DIR created for it is not', async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'ams-datadir-'))
  t.teardown(() => rm(root, { recursive: true, force: true }))
  const dataDir = path.join(root, 'data')
  const uploads = path.join(dataDir, 'uploads')
  await ensureUploadDir(uploads)
  t.equal(await modeOf(uploads), 0o750 & ~process.umask(), 'uploads: owner and group only')
  t.equal(await modeOf(dataDir), 0o777 & ~process.umask(), 'DATA_DIR: the default mode')
  await ensureUploadDir(uploads)
  t.equal(await modeOf(uploads), 0o750 & ~process.umask(), 'a second call changes nothing')
})

t.test('a private DATA_DIR gets the search bit for others, and nothing else', async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'ams-datadir-'))
  t.teardown(() => rm(root, { recursive: true, force: true }))
  const dataDir = path.join(root, 'data')
  await mkdir(dataDir, { mode: 0o750 })
  await letOthersTraverse(dataDir)
  t.equal(await modeOf(dataDir), 0o751)
  await letOthersTraverse(dataDir)
  t.equal(await modeOf(dataDir), 0o751, 'idempotent')
})
