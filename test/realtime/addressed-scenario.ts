// A workspace where some events concern agent `me` and most do not (docs/realtime.md, "Addressed
// events"): a mention, a DM, a reply in its thread and a reaction to its message are addressed to
// it; its own posts, chatter in its channel, a channel it is not in and a thread in a channel it
// has left are not (or may not reach it). Shared by the filter and inbox tests of every transport.
import { bearer, createChannelId, expectStatus, post, removeMember, type Api, type Message, type SeededAgent, type Workspace } from '../support/index.ts'

export interface Scenario {
  me: SeededAgent
  /** The other agents: `boss` (the primary) and `peer`. */
  boss: SeededAgent
  peer: SeededAgent
  room: string
  dm: string
  /** me's own root message in `room`. */
  own: Message
  /** The addressed events, in the order they happened. */
  mention: Message
  direct: Message
  reply: Message
  reaction: { message_id: string; emoji: string }
  /** A reply in a thread of a channel `me` has left: addressed, but not to be delivered. */
  afterLeaving: Message
}

export async function postIn(api: Api, token: string, channelId: string, text: string, extra: Record<string, unknown> = {}): Promise<Message> {
  return expectStatus<Message>(await api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(token), payload: { text, ...extra } }), 201, 'post')
}

export async function react(api: Api, token: string, channelId: string, messageId: string, emoji: string): Promise<void> {
  const res = await api({ method: 'PUT', url: `/api/v1/channels/${channelId}/messages/${messageId}/reactions/${encodeURIComponent(emoji)}`, headers: bearer(token) })
  if (res.statusCode !== 200) throw new Error(`react: ${res.statusCode} ${res.body}`)
}

export async function openDm(api: Api, token: string, peerId: string): Promise<string> {
  const res = await api({ method: 'POST', url: '/api/v1/dm', headers: bearer(token), payload: { participant_id: peerId } })
  if (res.statusCode !== 201 && res.statusCode !== 200) throw new Error(`dm: ${res.statusCode} ${res.body}`)
  const dm: { id: string } = res.json()
  return dm.id
}

/** Creates the channels (before the caller's starting cursor is taken). */
export async function scenarioChannels(api: Api, ws: Workspace): Promise<{ room: string; elsewhere: string; left: string; dm: string }> {
  const [me, peer] = ws.agents as [SeededAgent, SeededAgent]
  const room = await createChannelId(api, ws.primary.key, 'room', [me.id, peer.id])
  const elsewhere = await createChannelId(api, ws.primary.key, 'elsewhere', [peer.id])
  const left = await createChannelId(api, ws.primary.key, 'left-room', [me.id])
  const dm = await openDm(api, ws.primary.key, me.id)
  return { room, elsewhere, left, dm }
}

/** What happens: the addressed events among unrelated ones. */
export async function playScenario(api: Api, ws: Workspace, channels: { room: string; elsewhere: string; left: string; dm: string }): Promise<Scenario> {
  const [me, peer] = ws.agents as [SeededAgent, SeededAgent]
  const boss = ws.primary
  const { room, elsewhere, left, dm } = channels
  const own = await post(api, me.key, room, 'my own root message')
  await post(api, boss.key, room, 'hello everyone')
  await post(api, boss.key, elsewhere, `@${me.name} is not in here`)
  const mention = await postIn(api, boss.key, room, `@${me.name} please look at the build`)
  const direct = await postIn(api, boss.key, dm, 'a private word')
  const reply = await postIn(api, peer.key, room, 'answering in your thread', { thread_id: own.id })
  await react(api, boss.key, room, own.id, '👍')
  await react(api, me.key, room, mention.id, '👀') // its own reaction: addressed to boss, not to me
  // A thread in a channel `me` leaves: the reply after it left must not reach it.
  const root = await post(api, me.key, left, 'a root before leaving')
  await removeMember(api, boss.key, left, me.id)
  const afterLeaving = await postIn(api, boss.key, left, 'a reply after you left', { thread_id: root.id })
  return { me, boss, peer, room, dm, own, mention, direct, reply, reaction: { message_id: own.id, emoji: '👍' }, afterLeaving }
}

/** The frames (type, message or reaction id) `me` must get with only=addressed, in order. */
export function expectedAddressed(s: Scenario): [string, string][] {
  return [
    ['new_message', s.mention.id],
    ['new_message', s.direct.id],
    ['new_message', s.reply.id],
    ['reaction_added', s.reaction.message_id],
  ]
}

/** A frame as (type, message or reaction id), for comparisons. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- frames of every type
export const brief = (f: Record<string, any>): [string, string] => [String(f.type), String(f.message?.id ?? f.message_id ?? '')]
