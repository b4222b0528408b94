// Owner settings in a real browser, webhooks part, against a real receiver: add a webhook to an
// agent (the signing secret seen once, and it signs the deliveries), its delivery history with
// status and attempts, the webhook turned off automatically with the reason in words, turned back
// on, a failed delivery sent again and delivered, turned off by hand, deleted.
import t from 'tap'
import { eventually, FAST_ENV, receiver, verifySignature } from '../webhooks/helpers.ts'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'
import { bearer, createChannelId, post, seedWorkspace } from '../support/index.ts'

const skip = browserSkip()

t.test('owner settings: an agent webhook, its deliveries and its disabled state', { skip }, async (t) => {
  // Two attempts per delivery; four failed attempts in a row turn the webhook off.
  const env = { ...FAST_ENV, WEBHOOK_RETRY_SCHEDULE: '0', WEBHOOK_DISABLE_AFTER_SECONDS: '0', WEBHOOK_DISABLE_MIN_FAILURES: '4' }
  const { app, api, base } = await startServer(t, { env })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  const channel = await createChannelId(api, ws.owner.token, 'hooks', [agent.id])
  let failing = false
  const hook = await receiver(t, () => (failing ? 500 : 200))
  const browser = await launch(t)
  const { page, problems } = await openPage(t, browser)
  await signedInContext(page, ws.owner, 'admin', true)
  page.on('dialog', (dialog) => void dialog.accept())
  const webhookOf = async () => {
    const res = await api({ method: 'GET', url: `/api/v1/agents/${agent.id}/webhooks`, headers: bearer(ws.owner.token) })
    return res.json()[0] as { id: string; active: boolean; disabled_reason: string | null } | undefined
  }

  await page.goto(`${base}/settings/agents/${agent.id}`)
  await page.getByText('No webhooks yet').waitFor()
  await page.getByLabel('Webhook URL').fill(hook.url())
  t.ok(await page.getByRole('checkbox', { name: /A message is posted/ }).isChecked(), 'message.created is chosen by default')
  await page.getByRole('checkbox', { name: /A message is edited/ }).check()
  await page.getByRole('button', { name: 'Add webhook' }).click()

  const region = page.getByRole('region', { name: 'signing secret' })
  await region.waitFor()
  t.match(await region.textContent(), /shown only once/)
  const secret = (await region.getByTestId('secret').textContent()) ?? ''
  t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  const created = await webhookOf()
  t.ok(created?.active)

  // The secret shown is the one that signs the deliveries.
  await post(api, agent.key, channel, 'first')
  const [first] = await hook.waitFor(1)
  t.ok(verifySignature(secret, first!.body, first!.headers['x-webhook-signature']), 'signed with the secret shown')
  await page.getByRole('button', { name: 'I have saved it' }).click()
  await region.waitFor({ state: 'detached' })
  await page.reload()
  const item = page.getByTestId('webhook')
  await item.waitFor()
  t.notMatch(await page.locator('body').textContent(), secret, 'not shown again')
  t.match(await item.textContent(), new RegExp(`${hook.url().replaceAll('.', '\\.')}`))
  t.match(await item.textContent(), /On/)
  t.match(await item.textContent(), /A message is posted · A message is edited/)

  // Delivery history: the first delivery, delivered in one attempt.
  await item.getByRole('button', { name: 'Deliveries' }).click()
  const delivered = item.getByTestId('delivery').first()
  await delivered.getByText('Delivered').waitFor()
  t.match(await delivered.textContent(), /1 attempt/)
  t.match(await delivered.textContent(), /Answered HTTP 200/)

  // The receiver fails: two deliveries of two attempts each turn the webhook off.
  failing = true
  await post(api, agent.key, channel, 'second')
  await post(api, agent.key, channel, 'third')
  const off = await eventually(async () => {
    const w = await webhookOf()
    return w && !w.active ? w : null
  }, 'the webhook to be turned off')
  t.match(off.disabled_reason, /^disabled after 4 consecutive failed deliveries/)
  await page.reload()
  await item.waitFor()
  const notice = item.getByTestId('disabled-notice')
  await notice.waitFor()
  t.match(await notice.textContent(), /This webhook is off and receives no events\./)
  t.match(await notice.textContent(), /turned off automatically because deliveries kept failing/)
  t.match(await notice.textContent(), /Turned off after 4 consecutive failed deliveries since .*; last error: HTTP 500/)
  t.match(await item.textContent(), /Turned off/)
  await item.getByRole('button', { name: 'Deliveries' }).click()
  const failed = item.getByTestId('delivery').filter({ hasText: 'Failed' })
  await eventually(async () => (await failed.count()) === 2, 'two failed deliveries listed', 200)
  t.match(await failed.first().textContent(), /2 attempts/)
  t.match(await failed.first().textContent(), /HTTP 500/)
  t.ok(await failed.first().getByRole('button', { name: /again/ }).isDisabled(), 'no redelivery while off')
  await page.getByText('Turn the webhook back on to send deliveries again.').waitFor()
  await checkAccessibility(t, page, 'webhook turned off')
  await screenshot(page, 'settings-webhook-off')

  // Back on; a failed delivery sent again reaches the receiver and shows delivered.
  failing = false
  await notice.getByRole('button', { name: 'Turn it back on' }).click()
  await notice.waitFor({ state: 'detached' })
  t.ok((await webhookOf())?.active)
  const before = hook.requests.length
  await failed.first().getByRole('button', { name: /again/ }).click()
  await hook.waitFor(before + 1)
  await eventually(async () => (await item.getByTestId('delivery').filter({ hasText: 'Failed' }).count()) === 1, 'one failed delivery left', 200)
  const redelivered = item.getByTestId('delivery').filter({ hasText: '3 attempts' })
  await redelivered.getByText('Delivered').waitFor()

  // Turned off by hand: the reason says so.
  await item.getByRole('button', { name: 'Turn off', exact: true }).click()
  await notice.waitFor()
  t.match(await notice.textContent(), /turned off by hand, not because of failures/)
  t.equal((await webhookOf())?.active, false)

  // Deleted.
  await item.getByRole('button', { name: `Delete the webhook ${hook.url()}` }).click()
  await page.getByText('No webhooks yet').waitFor()
  t.equal(await webhookOf(), undefined)
  t.same(problems, [])
})
