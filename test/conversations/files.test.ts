import { readdir, readFile } from 'node:fs/promises'
import t from 'tap'
import { multipart, setup } from './fixtures/support.ts'
import { bearer, createChannel, UUID_RE } from '../support/index.ts'

const MiB = 1024 * 1024

t.test('multipart text + file: 201 with the attachment; the file is stored under a server-chosen name and downloads for members only', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'files')
  const content = Buffer.from('%PDF-1.7 fake report\n'.repeat(1000))
  const form = multipart([
    { name: 'text', value: 'the report' },
    { name: 'file', file: content, filename: '..\\..\\etc/Quarterly report é.pdf', type: 'application/pdf' },
  ])
  c.events.length = 0
  const res = await c.api({ method: 'POST', url: `/api/v1/channels/${ch.id}/messages`, headers: { ...bearer(c.tok.a1), ...form.headers }, payload: form.payload })
  t.equal(res.statusCode, 201, res.body)
  const m = res.json()
  t.equal(m.text, 'the report')
  t.match(m.attachment.id, UUID_RE)
  t.equal(m.attachment.file_name, 'Quarterly report é.pdf', 'no directories')
  t.equal(m.attachment.content_type, 'application/pdf')
  t.equal(m.attachment.size, content.length)
  t.equal(m.attachment.download_url, `http://localhost:3000/api/v1/attachments/${m.attachment.id}`)
  t.same(c.events[0]!.payload, { message: m })

  const stored = await readdir(c.config.uploadDir)
  t.equal(stored.length, 1)
  t.match(stored[0], UUID_RE, "the stored name is ours, not the client's")
  t.same(await readFile(`${c.config.uploadDir}/${stored[0]}`), content)

  const listed = await c.api({ method: 'GET', url: `/api/v1/channels/${ch.id}/messages`, headers: bearer(c.tok.a1) })
  t.same(listed.json().messages[0], m)

  const dl = await c.api({ method: 'GET', url: `/api/v1/attachments/${m.attachment.id}`, headers: bearer(c.tok.a1) })
  t.equal(dl.statusCode, 200)
  t.same(dl.rawPayload, content)
  t.equal(dl.headers['content-type'], 'application/octet-stream')
  t.equal(dl.headers['content-disposition'], `attachment; filename="Quarterly report _.pdf"; filename*=UTF-8''Quarterly%20report%20%C3%A9.pdf`)
  t.equal(dl.headers['x-content-type-options'], 'nosniff')
  t.equal(dl.headers['content-length'], String(content.length))
  for (const token of [c.tok.a2, c.tok.member, c.tok.observer]) {
    const denied = await c.api({ method: 'GET', url: `/api/v1/attachments/${m.attachment.id}`, headers: bearer(token) })
    t.equal(denied.statusCode, 404)
    t.equal(denied.json().code, 'NOT_FOUND')
  }
  t.equal((await c.api({ method: 'GET', url: `/api/v1/attachments/${m.attachment.id}`, headers: bearer(c.tok.owner) })).statusCode, 200, 'the owner reads any regular channel')
  t.equal((await c.api({ method: 'GET', url: '/api/v1/attachments/not-a-uuid', headers: bearer(c.tok.a1) })).statusCode, 404)
})

t.test('a file larger than 10 MiB: 413 PAYLOAD_TOO_LARGE, no file left on disk, nothing stored', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'big')
  const url = `/api/v1/channels/${ch.id}/messages`
  const tooBig = multipart([
    { name: 'text', value: 'too big' },
    { name: 'file', file: Buffer.alloc(10 * MiB + 1, 7), filename: 'big.bin' },
  ])
  c.events.length = 0
  const res = await c.api({ method: 'POST', url, headers: { ...bearer(c.tok.a1), ...tooBig.headers }, payload: tooBig.payload })
  t.equal(res.statusCode, 413)
  t.equal(res.json().code, 'PAYLOAD_TOO_LARGE')
  t.same(await readdir(c.config.uploadDir), [], 'no partial file')
  t.equal(await c.app.db.prisma.message.count(), 0)
  t.equal(await c.app.db.prisma.attachment.count(), 0)
  t.same(c.events, [])

  // Text after the file, and exactly 10 MiB: accepted.
  const exact = multipart([
    { name: 'file', file: Buffer.alloc(10 * MiB, 7), filename: 'exact.bin' },
    { name: 'text', value: 'just fits' },
  ])
  const ok = await c.api({ method: 'POST', url, headers: { ...bearer(c.tok.a1), ...exact.headers }, payload: exact.payload })
  t.equal(ok.statusCode, 201, ok.body)
  t.equal(ok.json().attachment.size, 10 * MiB)
  t.equal(ok.json().text, 'just fits')
  t.equal((await readdir(c.config.uploadDir)).length, 1)
})

t.test('multipart rules: a file with empty or no text is fine; neither → 400; unknown fields → 400; non-members 404, observers 403, no file left', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'rules')
  const url = `/api/v1/channels/${ch.id}/messages`
  const send = (token: string, parts: Parameters<typeof multipart>[0]) => {
    const form = multipart(parts)
    return c.api({ method: 'POST', url, headers: { ...bearer(token), ...form.headers }, payload: form.payload })
  }
  const empty = await send(c.tok.a1, [
    { name: 'text', value: '' },
    { name: 'file', file: Buffer.from('a'), filename: 'a.txt', type: 'text/plain' },
  ])
  t.equal(empty.statusCode, 201)
  t.equal(empty.json().text, '')
  t.equal(empty.json().attachment.content_type, 'text/plain')
  const noText = await send(c.tok.a1, [{ name: 'file', file: Buffer.from('b'), filename: '', type: 'not a type' }])
  t.equal(noText.statusCode, 201)
  t.equal(noText.json().attachment.file_name, 'file')
  t.equal(noText.json().attachment.content_type, 'application/octet-stream')
  const textOnly = await send(c.tok.a1, [{ name: 'text', value: 'plain text by form' }])
  t.equal(textOnly.statusCode, 201)
  t.equal(textOnly.json().attachment, undefined)
  const before = (await readdir(c.config.uploadDir)).length
  for (const parts of [
    [],
    [{ name: 'text', value: '  ' }],
    [{ name: 'other', value: 'x' }],
    [
      { name: 'text', value: 'x' },
      { name: 'attachment', file: Buffer.from('c') },
    ],
    [
      { name: 'file', file: Buffer.from('c') },
      { name: 'text', value: 'x' },
      { name: 'text', value: 'y' },
    ],
  ]) {
    const res = await send(c.tok.a1, parts)
    t.equal(res.statusCode, 400, JSON.stringify(parts.map((p) => p.name)))
  }
  const two = await send(c.tok.a1, [
    { name: 'file', file: Buffer.from('c') },
    { name: 'file', file: Buffer.from('d') },
  ])
  t.ok(two.statusCode === 400 || two.statusCode === 413, 'a second file is refused')
  t.equal(
    (
      await send(c.tok.a2, [
        { name: 'text', value: 'x' },
        { name: 'file', file: Buffer.from('c') },
      ])
    ).statusCode,
    404,
  )
  await c.api({ method: 'POST', url: `/api/v1/channels/${ch.id}/members`, headers: bearer(c.tok.a1), payload: { user_id: c.ws.observer.id } })
  t.equal(
    (
      await send(c.tok.observer, [
        { name: 'text', value: 'x' },
        { name: 'file', file: Buffer.from('c') },
      ])
    ).statusCode,
    403,
  )
  t.equal((await readdir(c.config.uploadDir)).length, before, 'refused uploads leave no file')
  t.equal(await c.app.db.prisma.message.count(), 3)
})

t.test("deleting a message removes its file; deleting a channel removes its messages' files", async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'cleanup')
  const url = `/api/v1/channels/${ch.id}/messages`
  const upload = async (name: string) => {
    const form = multipart([
      { name: 'text', value: name },
      { name: 'file', file: Buffer.from(name), filename: `${name}.txt` },
    ])
    return (await c.api({ method: 'POST', url, headers: { ...bearer(c.tok.a1), ...form.headers }, payload: form.payload })).json()
  }
  const a = await upload('a')
  await upload('b')
  await upload('c')
  t.equal((await readdir(c.config.uploadDir)).length, 3)
  t.equal((await c.api({ method: 'DELETE', url: `${url}/${a.id}`, headers: bearer(c.tok.a1) })).statusCode, 204)
  t.equal((await readdir(c.config.uploadDir)).length, 2)
  t.equal((await c.api({ method: 'GET', url: `/api/v1/attachments/${a.attachment.id}`, headers: bearer(c.tok.a1) })).statusCode, 404)
  t.equal((await c.api({ method: 'DELETE', url: `/api/v1/channels/${ch.id}`, headers: bearer(c.tok.a1) })).statusCode, 204)
  t.same(await readdir(c.config.uploadDir), [])
  t.equal(await c.app.db.prisma.attachment.count(), 0)
})

t.test('Idempotency-Key with a file: one message, one stored file', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'idem-files')
  const form = multipart([
    { name: 'text', value: 'once' },
    { name: 'file', file: Buffer.from('payload'), filename: 'p.txt' },
  ])
  const headers = { ...bearer(c.tok.a1), ...form.headers, 'idempotency-key': 'file-1' }
  const url = `/api/v1/channels/${ch.id}/messages`
  const first = await c.api({ method: 'POST', url, headers, payload: form.payload })
  const second = await c.api({ method: 'POST', url, headers, payload: form.payload })
  t.equal(first.statusCode, 201)
  t.same(second.json(), first.json())
  t.equal(await c.app.db.prisma.message.count(), 1)
  t.equal((await readdir(c.config.uploadDir)).length, 1)
  const other = multipart([
    { name: 'text', value: 'once' },
    { name: 'file', file: Buffer.from('other payload'), filename: 'p.txt' },
  ])
  const conflict = await c.api({ method: 'POST', url, headers: { ...bearer(c.tok.a1), ...other.headers, 'idempotency-key': 'file-1' }, payload: other.payload })
  t.equal(conflict.statusCode, 409)
  t.equal((await readdir(c.config.uploadDir)).length, 1)
})

t.test('over a real socket: an 11 MB upload gets 413 while streaming, and no file is left', async (t) => {
  const http = await import('node:http')
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'socket')
  await c.app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = c.app.server.address() as import('node:net').AddressInfo
  const form = multipart([
    { name: 'text', value: 'big' },
    { name: 'file', file: Buffer.alloc(11 * 1000 * 1000, 1), filename: 'big.bin' },
  ])
  const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: 'POST', path: `/api/v1/channels/${ch.id}/messages`, headers: { ...bearer(c.tok.a1), ...form.headers, 'content-length': form.payload.length } },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (d) => (body += d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      },
    )
    req.on('error', reject)
    req.end(form.payload)
  })
  t.equal(result.status, 413)
  t.equal(JSON.parse(result.body).code, 'PAYLOAD_TOO_LARGE')
  t.same(await readdir(c.config.uploadDir), [])
  t.equal(await c.app.db.prisma.message.count(), 0)
})
