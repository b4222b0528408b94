// Reactions, typing and presence in a real browser: toggling a reaction with the picker and the
// chip (and seeing another person's live), the "is typing…" line fed by another person's
// composer, and an agent's online dot and status; axe on the screen; 1280 and 360 px screenshots.
import t from 'tap'
import WebSocket from 'ws'
import { bearer, seedWorkspace } from '../support/index.ts'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'

const skip = browserSkip()
const json = { 'content-type': 'application/json' }

t.test('reactions, typing and presence', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const created = await api({ method: 'POST', url: '/api/v1/channels', headers: { ...bearer(ws.owner.token), ...json }, payload: { name: 'general', topic: 'Deploys' } })
  const channel = created.json()
  for (const id of [ws.member.id, ws.primary.id]) {
    t.equal((await api({ method: 'POST', url: `/api/v1/channels/${channel.id}/members`, headers: { ...bearer(ws.owner.token), ...json }, payload: { user_id: id } })).statusCode, 201)
  }
  const post = (key: string, text: string) => api({ method: 'POST', url: `/api/v1/channels/${channel.id}/messages`, headers: { ...bearer(key), ...json }, payload: { text } })
  const request = (await post(ws.owner.token, 'Can someone deploy the release?')).json()
  // The agent acknowledges with 👀, as agents do.
  const eyes = await api({ method: 'PUT', url: `/api/v1/channels/${channel.id}/messages/${request.id}/reactions/${encodeURIComponent('👀')}`, headers: bearer(ws.primary.key) })
  t.equal(eyes.statusCode, 200)
  const dm = await api({ method: 'POST', url: '/api/v1/dm', headers: { ...bearer(ws.member.token), ...json }, payload: { participant_id: ws.primary.id } })
  t.equal(dm.statusCode, 201)
  const browser = await launch(t)

  const alice = await openPage(t, browser)
  await signedInContext(alice.page, ws.member, 'member')
  await alice.page.goto(`${base}/c/${channel.id}`)
  const message = alice.page.getByTestId('message').filter({ hasText: 'deploy the release' })
  await message.waitFor()
  const eyesChip = message.getByRole('button', { name: '👀 1 reaction' })
  await eyesChip.waitFor()
  t.equal(await eyesChip.getAttribute('aria-pressed'), 'false', "the agent's reaction, not Alice's")

  // Alice adds ✅ from the picker; the owner, in another browser, sees it arrive live.
  const owner = await openPage(t, browser)
  await signedInContext(owner.page, ws.owner, 'admin', true)
  await owner.page.goto(`${base}/c/${channel.id}`)
  const ownerMessage = owner.page.getByTestId('message').filter({ hasText: 'deploy the release' })
  await ownerMessage.waitFor()
  await message.getByRole('button', { name: 'Add reaction' }).click()
  await message.getByRole('button', { name: 'React with ✅' }).click()
  await message.getByRole('button', { name: '✅ 1 reaction, including yours' }).waitFor()
  await ownerMessage.getByRole('button', { name: '✅ 1 reaction' }).waitFor()
  // Clicking the 👀 chip joins the agent's reaction; clicking again takes it back.
  await eyesChip.click()
  await message.getByRole('button', { name: '👀 2 reactions, including yours' }).click()
  await message.getByRole('button', { name: '👀 1 reaction' }).waitFor()
  await ownerMessage.getByRole('button', { name: '👀 1 reaction' }).waitFor()
  const stored = await app.db.prisma.messageReaction.findMany({ where: { messageId: request.id }, orderBy: { createdAt: 'asc' } })
  t.same(
    stored.map((r) => [r.emoji, r.memberId]),
    [
      ['👀', ws.primary.id],
      ['✅', ws.member.id],
    ],
    'what the server keeps',
  )

  // The owner types; Alice sees the line, the owner does not see itself.
  await owner.page.getByLabel('Message general').pressSequentially('On it')
  const typing = alice.page.getByTestId('typing-line')
  await typing.filter({ hasText: 'owner is typing…' }).waitFor()
  t.equal(await owner.page.getByTestId('typing-line').textContent(), '', 'not shown to the typist')

  // The agent connects and sets a status: its DM shows it online with the status.
  const socket = new WebSocket(`${base.replace('http', 'ws')}/ws?token=${encodeURIComponent(ws.primary.key)}`)
  t.teardown(() => socket.close())
  await new Promise((resolve) => socket.once('message', resolve))
  const status = await api({ method: 'PUT', url: '/api/v1/agents/me/status', headers: { ...bearer(ws.primary.key), ...json }, payload: { text: 'deploying v2', expires_in_seconds: 600 } })
  t.equal(status.statusCode, 200)
  const sidebar = alice.page.getByRole('navigation', { name: 'Conversations' })
  await sidebar.locator('[data-testid="online-dot"][data-online="true"]').waitFor()
  await alice.page.goto(`${base}/c/${dm.json().id}`)
  await alice.page.locator('.channel-header .agent-status', { hasText: 'deploying v2' }).waitFor()
  await alice.page.goto(`${base}/c/${channel.id}`)
  await message.getByRole('button', { name: 'Add reaction' }).click()
  await checkAccessibility(t, alice.page, 'reactions')
  await screenshot(alice.page, 'reactions-1280')

  const phone = await openPage(t, browser, { width: 360, height: 740 })
  await signedInContext(phone.page, ws.member, 'member')
  await phone.page.goto(`${base}/c/${channel.id}`)
  const small = phone.page.getByTestId('message').filter({ hasText: 'deploy the release' })
  await small.getByRole('button', { name: 'Add reaction' }).click()
  await small.getByRole('button', { name: 'React with 🎉' }).waitFor()
  await checkAccessibility(t, phone.page, 'reactions-360')
  await screenshot(phone.page, 'reactions-360')
})

t.test('a quick second click on a chip goes out after the first: the server keeps what the chip shows', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const channel = (await api({ method: 'POST', url: '/api/v1/channels', headers: { ...bearer(ws.owner.token), ...json }, payload: { name: 'quick' } })).json()
  for (const id of [ws.member.id, ws.primary.id]) {
    t.equal((await api({ method: 'POST', url: `/api/v1/channels/${channel.id}/members`, headers: { ...bearer(ws.owner.token), ...json }, payload: { user_id: id } })).statusCode, 201)
  }
  const message = (await api({ method: 'POST', url: `/api/v1/channels/${channel.id}/messages`, headers: { ...bearer(ws.owner.token), ...json }, payload: { text: 'ship it?' } })).json()
  const eyes = `/api/v1/channels/${channel.id}/messages/${message.id}/reactions/${encodeURIComponent('👀')}`
  t.equal((await api({ method: 'PUT', url: eyes, headers: bearer(ws.primary.key) })).statusCode, 200)

  const browser = await launch(t)
  const alice = await openPage(t, browser)
  await signedInContext(alice.page, ws.member, 'member')
  // The first add is held on its way for a moment: a take-back sent beside it would reach the
  // server first (as on a slow link, or a loaded server), and the add would then stay.
  let held = false
  await alice.page.route('**/reactions/**', async (route) => {
    if (route.request().method() === 'PUT' && !held) {
      held = true
      await new Promise((resolve) => setTimeout(resolve, 1_000))
    }
    await route.continue()
  })
  const answered = (method: string) => alice.page.waitForResponse((r) => r.request().method() === method && r.url().includes('/reactions/'))
  const answers = Promise.all([answered('PUT'), answered('DELETE')])
  await alice.page.goto(`${base}/c/${channel.id}`)
  const row = alice.page.getByTestId('message').filter({ hasText: 'ship it?' })
  await row.getByRole('button', { name: '👀 1 reaction' }).click()
  await row.getByRole('button', { name: '👀 2 reactions, including yours' }).click()
  const [put, del] = await answers
  t.equal(put.status(), 200, 'the add answered')
  t.equal(del.status(), 204, 'the take-back answered')
  const stored = await app.db.prisma.messageReaction.findMany({ where: { messageId: message.id } })
  t.same(
    stored.map((r) => [r.emoji, r.memberId]),
    [['👀', ws.primary.id]],
    "only the agent's reaction is kept, as the chip shows",
  )
  await row.getByRole('button', { name: '👀 1 reaction' }).waitFor()
  t.equal(await row.getByRole('button', { name: '👀 1 reaction' }).getAttribute('aria-pressed'), 'false', 'the chip is not pressed')
})
