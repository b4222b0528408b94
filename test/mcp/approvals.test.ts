// MCP tools for approvals (issue 26, docs/approvals.md): request_approval posts the request and
// waits (bounded) for the decision; called again with message_id it resumes the wait without
// posting; get_approval reads it. Approve, deny, edit and respond reach the agent with the right
// final arguments; a human decides over REST meanwhile.
import t from 'tap'
import { call, connectClient, setup, structured, textOf, type McpCtx } from './helpers.ts'
import { bearer } from '../support/index.ts'

async function channel(ctx: McpCtx, name: string, memberIds: string[]): Promise<string> {
  const res = await ctx.api({ method: 'POST', url: '/api/v1/channels', headers: bearer(ctx.ws.owner.token), payload: { name } })
  const id = res.json().id as string
  for (const user_id of memberIds) await ctx.api({ method: 'POST', url: `/api/v1/channels/${id}/members`, headers: bearer(ctx.ws.owner.token), payload: { user_id } })
  return id
}

const ARGS = { customer: 'c_42', amount_eur: 120 }

t.test('request_approval waits for the decision; get_approval reads it; each decision reaches the agent', async (t) => {
  const ctx = await setup(t)
  const agent = ctx.ws.agents[0]!
  const ch = await channel(ctx, 'billing', [agent.id, ctx.ws.member.id])
  const { client } = await connectClient(t, ctx.base, agent.key)
  const decide = (messageId: string, body: Record<string, unknown>) =>
    ctx.api({ method: 'POST', url: `/api/v1/channels/${ch}/messages/${messageId}/approval`, headers: bearer(ctx.ws.member.token), payload: body })

  // Nobody decides within the wait: pending, with how to resume.
  const first = await call(client, 'request_approval', {
    channel: 'billing',
    action: 'refund',
    arguments: ARGS,
    summary: 'Refund 120 EUR to c_42',
    choices: ['approve', 'edit', 'respond'],
    wait_seconds: 0,
  })
  const pending = structured(first)
  t.equal(pending.done, false)
  t.equal(pending.approval.status, 'pending')
  t.same(pending.approval.arguments, ARGS)
  t.same(pending.approval.choices, ['approve', 'deny', 'edit', 'respond'])
  const messageId = pending.approval.message_id as string
  t.match(textOf(first), `message_id=${messageId}`)
  const msg = (await ctx.api({ method: 'GET', url: `/api/v1/channels/${ch}/messages/${messageId}`, headers: bearer(ctx.ws.member.token) })).json()
  t.equal(msg.text, 'Refund 120 EUR to c_42', 'the text defaults to the summary')

  // Resumed with the message id: waits, and a decision made meanwhile ends the wait.
  const waiting = call(client, 'request_approval', { channel: ch, message_id: messageId, wait_seconds: 20 })
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal((await decide(messageId, { decision: 'edit', arguments: { ...ARGS, amount_eur: 100 } })).statusCode, 200)
  const resumed = structured(await waiting)
  t.equal(resumed.done, true)
  t.same(resumed.approval.final_arguments, { ...ARGS, amount_eur: 100 })
  t.equal(resumed.approval.decision, 'edit')
  t.equal(await ctx.app.db.prisma.approval.count(), 1, 'resuming posted nothing')

  const read = await call(client, 'get_approval', { channel: 'billing', message_id: messageId })
  t.same(structured(read), resumed)
  t.match(textOf(read), 'approved (edit) by member; run with {"customer":"c_42","amount_eur":100}')

  // The other decisions, each decided while the tool waits.
  const cases: [Record<string, unknown>, Record<string, unknown> | null, string][] = [
    [{ decision: 'approve' }, ARGS, 'approved'],
    [{ decision: 'deny' }, null, 'denied'],
    [{ decision: 'respond', comment: 'Only 60 EUR.' }, null, 'denied'],
  ]
  for (const [body, finalArguments, status] of cases) {
    const before = await ctx.app.db.prisma.approval.count()
    const asking = call(client, 'request_approval', {
      channel: 'billing',
      action: 'refund',
      arguments: ARGS,
      summary: `Refund? (${String(body.decision)})`,
      choices: ['approve', 'respond'],
      wait_seconds: 20,
    })
    let id: string | undefined
    for (let i = 0; i < 200 && !id; i++) {
      const rows = await ctx.app.db.prisma.approval.findMany({ where: { status: 'pending' } })
      if (rows.length && (await ctx.app.db.prisma.approval.count()) > before) id = rows[0]!.messageId
      else await new Promise((resolve) => setTimeout(resolve, 25))
    }
    t.ok(id, 'posted')
    t.equal((await decide(id!, body)).statusCode, 200)
    const done = structured(await asking)
    t.equal(done.done, true)
    t.equal(done.approval.status, status)
    t.equal(done.approval.decision, body.decision)
    t.same(done.approval.final_arguments, finalArguments, `${String(body.decision)}: final arguments`)
    t.equal(done.approval.comment, body.comment ?? null)
  }

  // Refusals: a human cannot ask; neither action nor message_id; an unknown message.
  const { client: human } = await connectClient(t, ctx.base, ctx.ws.member.token)
  const refused = await human.callTool({ name: 'request_approval', arguments: { channel: 'billing', action: 'x', summary: 'y', wait_seconds: 0 } })
  t.equal(refused.isError, true)
  const neither = await client.callTool({ name: 'request_approval', arguments: { channel: 'billing', wait_seconds: 0 } })
  t.equal(neither.isError, true)
  const unknown = await client.callTool({ name: 'get_approval', arguments: { channel: 'billing', message_id: '01890000-0000-7000-8000-000000000000' } })
  t.equal(unknown.isError, true)
})
