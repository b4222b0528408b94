// Who receives an event, without a server (src/realtime/hub.ts `visibleTo`, src/events/filter.ts
// `filteredOut`): every event type of the catalog, for every relation a member can have to it,
// under every filter a client can ask for. The WebSocket, SSE, long polls and the REST log all
// decide with these two functions, so this is the rule for all of them (docs/realtime.md):
// - clients receive the client events (those with a frame) of the channels they are in, or of
//   which they are the audience (the members of a channel just deleted, a member just removed);
// - message.mentioned goes only to the members it notifies;
// - only=mentions passes message.mentioned alone, only=addressed the events addressed to the
//   member, and include_own_messages=false leaves out the member's own new and edited messages.
import t from 'tap'
import { EVENTS } from '../../src/events/catalog.ts'
import { filteredOut, type EventFilter } from '../../src/events/filter.ts'
import { CLIENT_EVENTS, type DomainEvent } from '../../src/events/types.ts'
import { visibleTo } from '../../src/realtime/hub.ts'

const ME = '01a00000-0000-7000-8000-00000000000a'
const OTHER = '01a00000-0000-7000-8000-00000000000b'
const CHANNEL = '01a00000-0000-7000-8000-0000000000c1'
const ELSEWHERE = '01a00000-0000-7000-8000-0000000000c2'

/** How the member stands to the event. */
type Relation = 'member' | 'stranger' | 'audience' | 'author' | 'addressed' | 'mentioned'
const RELATIONS: Relation[] = ['member', 'stranger', 'audience', 'author', 'addressed', 'mentioned']

const FILTERS: [string, EventFilter][] = [
  ['no filter', {}],
  ['only=addressed', { only: 'addressed' }],
  ['only=mentions', { only: 'mentions' }],
  ['include_own_messages=false', { skipsOwnMessages: true }],
  ['only=addressed, include_own_messages=false', { only: 'addressed', skipsOwnMessages: true }],
]

/** A sample event of `type`, shaped by the relation (only the fields the rules read matter). */
function sample(type: string, relation: Relation): DomainEvent {
  const message = { id: '01a00000-0000-7000-8000-0000000000e1', author_id: relation === 'author' ? ME : OTHER }
  const payload = { message, mentioned_ids: relation === 'mentioned' ? [ME] : [OTHER], mentioned_agent_ids: [] }
  return {
    id: '01a00000-0000-7000-8000-0000000000f1',
    type,
    channelId: relation === 'stranger' || relation === 'audience' ? ELSEWHERE : CHANNEL,
    occurredAt: '2026-11-26T12:00:00.000Z',
    payload,
    ...(relation === 'audience' ? { audience: [ME] } : {}),
    ...(relation === 'addressed' || relation === 'mentioned' ? { addressed: { [ME]: 'mention' as const } } : {}),
  } as unknown as DomainEvent
}

/** The rules above, stated on their own. */
function expected(type: string, relation: Relation, filter: EventFilter): boolean {
  if (!(CLIENT_EVENTS as string[]).includes(type)) return false
  if (relation === 'stranger') return false
  if (type === 'message.mentioned' && relation !== 'mentioned') return false
  if (filter.only === 'mentions' && type !== 'message.mentioned') return false
  if (filter.only === 'addressed' && relation !== 'addressed' && relation !== 'mentioned') return false
  if (filter.skipsOwnMessages && relation === 'author' && (type === 'message.created' || type === 'message.updated')) return false
  return true
}

t.test('every event type, every relation, every filter', async (t) => {
  const types = Object.keys(EVENTS)
  t.ok(types.length >= 15, `${types.length} event types in the catalog`)
  const myChannels = new Set([CHANNEL])
  for (const type of types) {
    for (const relation of RELATIONS) {
      for (const [name, filter] of FILTERS) {
        const event = sample(type, relation)
        const receives = visibleTo(ME, myChannels, event) && !filteredOut(filter, ME, event)
        t.equal(receives, expected(type, relation, filter), `${type}, ${relation}, ${name}: ${expected(type, relation, filter) ? 'received' : 'not received'}`)
      }
    }
  }
})

t.test('an event of a workspace scope (no channel) reaches no client as an event frame', async (t) => {
  for (const type of Object.keys(EVENTS)) {
    const event = { ...sample(type, 'member'), channelId: null } as unknown as DomainEvent
    t.notOk(visibleTo(ME, new Set([CHANNEL]), event), `${type} without a channel`)
  }
})
