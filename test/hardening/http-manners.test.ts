// Issue 29, item 4, as the server answers: a known path asked with a method it does not serve is
// 405 with `Allow` (an unknown path stays 404); the upload's own operation (postMessageWithFile)
// takes multipart only; the e-mail rule is the document's pattern (`d1@test` is refused, as the
// document says).
import t from 'tap'
import { EMAIL_PATTERN } from '../../src/modules/accounts/rules.ts'
import { multipart } from '../conversations/fixtures/support.ts'
import { bearer, build, createChannelId, seedWorkspace } from '../support/index.ts'

t.test('HTTP manners', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const channel = await createChannelId(api, ws.primary.key, 'manners')

  await t.test('405 with Allow on known paths, whatever the credential; 404 on unknown paths', async (t) => {
    const cases: [string, string, string][] = [
      ['DELETE', '/api/v1/channels', 'GET, HEAD, POST'],
      ['PUT', `/api/v1/channels/${channel}`, 'DELETE, GET, HEAD, PATCH'],
      ['QUERY', '/api/v1/channels', 'GET, HEAD, POST'],
      ['OPTIONS', '/api/v1/auth/login', 'POST'],
      ['GET', `/api/v1/agents/${ws.primary.id}/keys/${ws.primary.keyId}`, 'DELETE'],
    ]
    for (const [method, url, allow] of cases) {
      for (const headers of [{}, bearer(ws.primary.key)]) {
        const res = await app.inject({ method: method as 'GET', url, headers })
        t.equal(res.statusCode, 405, `${method} ${url}`)
        t.equal(res.headers.allow, allow)
        t.same(res.json(), { error: `method ${method} is not allowed on ${url}; allowed: ${allow}`, code: 'METHOD_NOT_ALLOWED' })
      }
    }
    const unknown = await app.inject({ method: 'DELETE', url: '/api/v1/nothing-here' })
    t.equal(unknown.statusCode, 404)
    t.equal(unknown.headers.allow, undefined)
    t.equal(unknown.json().code, 'NOT_FOUND')
  })

  await t.test('postMessageWithFile: the same post as multipart; JSON there is 415', async (t) => {
    const form = multipart([
      { name: 'text', value: 'the report' },
      { name: 'file', file: Buffer.from('line one\n'), filename: 'report.txt', type: 'text/plain' },
    ])
    const res = await api({ method: 'POST', url: `/api/v1/channels/${channel}/messages/upload`, headers: { ...bearer(ws.primary.key), ...form.headers }, payload: form.payload })
    t.equal(res.statusCode, 201)
    t.match(res.json(), { channel_id: channel, text: 'the report', attachment: { file_name: 'report.txt', content_type: 'text/plain', size: 9 } })
    const json = await app.inject({
      method: 'POST',
      url: `/api/v1/channels/${channel}/messages/upload`,
      headers: { ...bearer(ws.primary.key), 'content-type': 'application/json' },
      payload: JSON.stringify({ text: 'no file' }),
    })
    t.equal(json.statusCode, 415)
    t.same(json.json(), { error: 'this endpoint takes multipart/form-data (JSON posts go to POST /api/v1/channels/{id}/messages)', code: 'UNSUPPORTED_MEDIA_TYPE' })
    const page = await api({ method: 'GET', url: `/api/v1/channels/${channel}/messages`, headers: bearer(ws.primary.key) })
    t.same(
      page.json().messages.map((m: { text: string }) => m.text),
      ['the report'],
      'the refused post stored nothing',
    )
  })

  await t.test('the e-mail rule is the pattern the document publishes', async (t) => {
    const pattern = new RegExp(EMAIL_PATTERN, 'u')
    const register = (email: string) => api({ method: 'POST', url: '/api/v1/auth/register', payload: { email, password: 'a long enough password', display_name: 'Someone' } })
    for (const email of ['d1@test', 'x@localhost', 'a..b@example.com', 'ü@example.com', '"q"@example.com']) {
      t.notOk(pattern.test(email), `${email}: outside the pattern`)
      const res = await register(email)
      t.equal(res.statusCode, 400, email)
      t.equal(res.json().code, 'INVALID_EMAIL', email)
    }
    for (const email of ["o'k+tag@sub.example.com", 'd1@test.example']) {
      t.ok(pattern.test(email), `${email}: inside the pattern`)
      t.equal((await register(email)).statusCode, 201, email)
    }
  })
})
