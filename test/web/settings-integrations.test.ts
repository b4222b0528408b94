// Owner settings in a real browser, integrations part: connect a platform (platform, events,
// agents) and see its API key and HMAC secret once, each with a copy button — and not again after
// a reload; both secrets work (inbound post, signed delivery to a real receiver). Turn it off and
// on, edit it, rotate its key (the old one is refused), delete it (its key is refused); a failed
// load says so in words and recovers.
import t from 'tap'
import { FAST_ENV, receiver, verifySignature } from '../webhooks/helpers.ts'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'
import { bearer, createChannelId, post, seedWorkspace } from '../support/index.ts'

const skip = browserSkip()

t.test('owner settings: integrations', { skip }, async (t) => {
  const { app, api, base } = await startServer(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  const channel = await createChannelId(api, ws.owner.token, 'bridge', [agent.id])
  const platform = await receiver(t)
  const browser = await launch(t)
  const { context, page, problems } = await openPage(t, browser)
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
  await signedInContext(page, ws.owner, 'admin', true)
  page.on('dialog', (dialog) => void dialog.accept())
  const inbound = (id: string, key: string) =>
    api({ method: 'POST', url: `/api/v1/integrations/${id}/inbound`, headers: bearer(key), payload: { channel_id: channel, agent_id: agent.id, text: 'from the platform' } })

  await t.test('a failed load is said in words, and "Try again" recovers', async (t) => {
    await page.route('**/api/v1/integrations', (route) =>
      route.fulfill({ status: 429, contentType: 'application/json', headers: { 'retry-after': '1' }, body: JSON.stringify({ error: 'rate limited', code: 'RATE_LIMITED' }) }),
    )
    await page.goto(`${base}/settings/integrations`)
    await page.getByText('Could not load the integrations.').waitFor()
    await page.getByText('Too many requests right now. Wait a moment and try again.').waitFor()
    t.notMatch(await page.locator('body').textContent(), /RATE_LIMITED|"code"/, 'no raw codes or JSON')
    await page.unroute('**/api/v1/integrations')
    await page.getByRole('button', { name: 'Try again' }).click()
    await page.getByText('No integrations yet').waitFor()
  })

  let integrationId = ''
  let apiKey = ''
  await t.test('the owner creates an integration and sees its key and HMAC secret once', async (t) => {
    await page.getByLabel('Name', { exact: true }).fill('Ops bridge')
    await page.getByLabel('Platform', { exact: true }).selectOption({ label: 'Anthropic' })
    await page.getByLabel('Webhook URL', { exact: true }).fill(platform.url('/events'))
    for (const event of ['A message is posted', 'A channel is created', 'Someone joins a channel', 'An agent connects']) {
      t.ok(await page.getByRole('checkbox', { name: new RegExp(event) }).isChecked(), `${event}: chosen by default`)
    }
    await page.getByRole('checkbox', { name: /An agent connects/ }).uncheck()
    await page.getByRole('checkbox', { name: /A channel is created/ }).uncheck()
    await page.getByRole('radio', { name: 'Only the agents chosen here' }).check()
    await page.getByRole('checkbox', { name: /agent-1/ }).check()
    await page.getByRole('button', { name: 'Create integration' }).click()

    const region = page.getByRole('region', { name: 'the secrets of Ops bridge' })
    await region.waitFor()
    t.match(await region.textContent(), /Copy these now\. They are shown only once and cannot be retrieved again\./)
    const [key, secret] = await region.getByTestId('secret').allTextContents()
    t.match(key, /^svc_int_[A-Za-z0-9+/]{43}=$/)
    t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
    apiKey = key!
    // each has its copy button, and it copies that secret
    await region.getByRole('button', { name: 'Copy the API key' }).click()
    await region.getByRole('button', { name: 'Copied the API key' }).waitFor()
    t.equal(await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText()), key)
    await region.getByRole('button', { name: 'Copy the HMAC secret' }).click()
    t.equal(await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText()), secret)
    await checkAccessibility(t, page, 'integration secrets')
    await screenshot(page, 'settings-integration-secrets')

    const list = await api({ method: 'GET', url: '/api/v1/integrations', headers: bearer(ws.owner.token) })
    const stored = list.json()[0]
    integrationId = stored.id
    t.equal(stored.name, 'Ops bridge')
    t.equal(stored.platform, 'anthropic')
    t.same(stored.events, ['message.created', 'member.joined'])
    t.same(stored.agent_ids, [agent.id])
    t.equal(stored.all_agents, false)

    // The key posts as the agent; the HMAC secret signs what the platform receives.
    t.equal((await inbound(integrationId, key!)).statusCode, 201)
    await post(api, ws.owner.token, channel, 'to the platform')
    const [delivery] = await platform.waitFor(1, (r) => r.headers['x-service-event'] === 'message.created')
    t.ok(verifySignature(secret!, delivery!.body, delivery!.headers['x-service-signature']), 'signed with the secret shown')

    await region.getByRole('button', { name: 'I have saved them' }).click()
    await region.waitFor({ state: 'detached' })
    await page.reload()
    const item = page.getByTestId('integration')
    await item.waitFor()
    const body = (await page.locator('body').textContent()) ?? ''
    t.notMatch(body, key!, 'the key is not shown again')
    t.notMatch(body, secret!, 'the HMAC secret is not shown again')
    const text = (await item.textContent()) ?? ''
    t.match(text, /Ops bridge/)
    t.match(text, /Anthropic/)
    t.match(text, /A message is posted · Someone joins a channel/)
    t.match(text, /Posts asagent-1/)
    t.ok(text.includes(`${key!.slice(0, 12)}…${key!.slice(-4)}`), 'the key masked')
    t.match(text, /On/)
  })

  await t.test('turn off and on, edit, rotate the key, see the deliveries, delete', async (t) => {
    const item = page.getByTestId('integration')
    await item.getByRole('button', { name: 'Turn off', exact: true }).click()
    const notice = item.getByTestId('disabled-notice')
    await notice.waitFor()
    t.match(await notice.textContent(), /This integration is off and receives no events\. It was turned off by hand/)
    t.equal((await api({ method: 'GET', url: `/api/v1/integrations/${integrationId}`, headers: bearer(ws.owner.token) })).json().active, false)
    await notice.getByRole('button', { name: 'Turn it back on' }).click()
    await notice.waitFor({ state: 'detached' })
    t.equal((await api({ method: 'GET', url: `/api/v1/integrations/${integrationId}`, headers: bearer(ws.owner.token) })).json().active, true)

    await item.getByRole('button', { name: 'Edit' }).click()
    const form = page.getByRole('form', { name: 'Edit Ops bridge' })
    await form.getByLabel('Name', { exact: true }).fill('Ops bridge 2')
    await form.getByRole('radio', { name: /Any agent/ }).check()
    await form.getByRole('button', { name: 'Save changes' }).click()
    await form.waitFor({ state: 'detached' })
    await item.getByRole('heading', { name: 'Ops bridge 2' }).waitFor()
    t.match(await item.textContent(), /Posts asAny agent/)

    await item.getByRole('button', { name: 'New API key' }).click()
    const region = page.getByRole('region', { name: 'the new API key of Ops bridge 2' })
    await region.waitFor()
    const fresh = (await region.getByTestId('secret').textContent()) ?? ''
    t.match(fresh, /^svc_int_/)
    t.not(fresh, apiKey)
    t.match(await region.textContent(), /The previous key no longer works/)
    t.equal((await inbound(integrationId, apiKey)).statusCode, 401, 'the old key is refused')
    t.equal((await inbound(integrationId, fresh)).statusCode, 201, 'the new key works')
    await region.getByRole('button', { name: 'I have saved it' }).click()

    await item.getByRole('button', { name: 'Deliveries' }).click()
    await item.getByTestId('delivery').filter({ hasText: 'Delivered' }).first().waitFor()

    await page.setViewportSize({ width: 360, height: 780 })
    await item.getByRole('heading', { name: 'Ops bridge 2' }).scrollIntoViewIfNeeded()
    await checkAccessibility(t, page, 'integrations at 360 px')
    await screenshot(page, 'settings-integrations-360')

    await item.getByRole('button', { name: 'Delete the integration Ops bridge 2' }).click()
    await page.getByText('No integrations yet').waitFor()
    t.equal((await inbound(integrationId, fresh)).statusCode, 401, 'its key is refused once deleted')
    t.same(problems, [])
  })
})
