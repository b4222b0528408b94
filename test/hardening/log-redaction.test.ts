// Issue 14 item 16 (and issue 15 item 7): credentials in query strings never reach the log, also
// when the parameter name is percent-encoded (`%74oken`) or named like `api_key`. A real server
// process at LOG_LEVEL=info; its output is what is checked.
import t from 'tap'
import { testConfig } from '../helper.ts'
import { freePort, serverEnv, startServer } from '../processes.ts'

t.test('query-string secrets are redacted in the request log, decoded names included', async (t) => {
  const config = await testConfig(t)
  const port = await freePort()
  const server = await startServer(t, serverEnv(config, port, { LOG_LEVEL: 'info' }))
  const secrets = {
    plainToken: 'svc_PLAINTOKENSECRET1',
    encodedToken: 'svc_ENCODEDTOKENSECRET2',
    inviteToken: 'inv_INVITETOKENSECRET3',
    apiKey: 'APIKEYSECRET4',
    encodedApiKey: 'APIKEYSECRET5',
    secret: 'CLIENTSECRET6',
    accessToken: 'ACCESSTOKENSECRET7',
  }
  const urls = [
    `/ws?token=${secrets.plainToken}`,
    `/ws?since=0&%74oken=${secrets.encodedToken}`,
    `/api/v1/invite?%74%6F%6B%65%6E=${secrets.inviteToken}`,
    `/api/v1/agents?api_key=${secrets.apiKey}&limit=5`,
    `/api/v1/agents?%61pi%5Fkey=${secrets.encodedApiKey}`,
    `/api/v1/agents?client_secret=${secrets.secret}`,
    `/api/v1/agents?Access-Token=${secrets.accessToken}`,
  ]
  for (const url of urls) await fetch(`${server.http}${url}`).then((r) => r.arrayBuffer())
  await new Promise((resolve) => setTimeout(resolve, 300))
  const out = server.output()
  for (const url of urls) t.ok(out.includes(url.split('?')[0]!), `the request to ${url.split('?')[0]} was logged`)
  for (const [name, value] of Object.entries(secrets)) t.notOk(out.includes(value), `${name} is not in the log`)
  t.match(out, /"url":"\/ws\?since=0&%74oken=\[redacted\]"/, 'the encoded name is kept, the value redacted')
  t.match(out, /"url":"\/api\/v1\/agents\?api_key=\[redacted\]&limit=5"/, 'other parameters are kept')
})
