// The event catalog: every domain event, declared once. Services emit these payloads (typed by
// this map: a wrong payload does not compile); the WebSocket frames, the REST event log, webhook
// and integration bodies, the OpenAPI `webhooks` section and the AsyncAPI document are derived
// from it. How to add an event: docs/architecture.md, "How to add an event".
import { Type, type Static, type TSchema } from 'typebox'
import { ApprovalSchema, type ApprovalDto } from '../schemas/approval.ts'
import { Timestamp, Uuid } from '../schemas/common.ts'
import { MessageSchema } from '../schemas/message.ts'
import { defineEvent, type EventCatalog } from './define.ts'

const ActorType = Type.Union([Type.Literal('AGENT'), Type.Literal('HUMAN')])

/** A channel as channel.created and channel.updated carry it (built by ./builders.ts). */
export const EventChannelSchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Type.String(),
    topic: Type.Union([Type.String(), Type.Null()]),
    type: Type.Union([Type.Literal('channel'), Type.Literal('dm')]),
    created_at: Timestamp,
  },
  { additionalProperties: false },
)

// Integration payloads are the spec's shapes, not the domain payloads: lower-case actor types.
const ActorLower = Type.Enum(['agent', 'human'], { description: 'Lower case.' })
const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()])
const lower = <T extends string>(s: T): Lowercase<T> => s.toLowerCase() as Lowercase<T>

const ReactionPayload = Type.Object({
  channel_id: Uuid,
  message_id: Uuid,
  emoji: Type.String({ description: 'One emoji or a `:shortcode:`.' }),
  member_id: Uuid,
  member_type: ActorType,
  member_name: Type.String(),
  count: Type.Integer({ minimum: 0, description: 'How many members reacted with this emoji after the change.' }),
})
const ReactionIntegrationPayload = Type.Object(
  { channel_id: Uuid, message_id: Uuid, emoji: Type.String(), member_id: Uuid, member_type: ActorLower, count: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
)
const reactionIntegrationPayload = (p: Static<typeof ReactionPayload>) => ({
  channel_id: p.channel_id,
  message_id: p.message_id,
  emoji: p.emoji,
  member_id: p.member_id,
  member_type: lower(p.member_type),
  count: p.count,
})

// ---- approvals (docs/approvals.md) ----
const ApprovalIntegrationPayload = Type.Object(
  {
    message_id: Uuid,
    channel_id: Uuid,
    requester_id: Uuid,
    action: Type.String(),
    status: Type.String({ description: '`approved`, `denied`, `expired` or `cancelled`.' }),
    decision: Nullable(Type.String()),
    final_arguments: Nullable(Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true })),
    decided_by: Nullable(Uuid),
    comment: Nullable(Type.String()),
  },
  { additionalProperties: false },
)
const approvalIntegrationPayload = ({ approval: a }: { approval: ApprovalDto }) => ({
  message_id: a.message_id,
  channel_id: a.channel_id,
  requester_id: a.requester_id,
  action: a.action,
  status: a.status,
  decision: a.decision,
  final_arguments: a.final_arguments,
  decided_by: a.decided_by,
  comment: a.comment,
})
const approvalEvent = (what: string, when: string) =>
  defineEvent({
    scope: 'channel',
    payload: Type.Object({ approval: ApprovalSchema }),
    frame: { description: `${what} Sent to the channel's members; addressed to the requesting agent (its inbox, \`only=addressed\`).`, summary: what },
    webhook: { when: `${when} (the requesting agent's \`requester_id\` tells whether it is its own).` },
    integration: { when, payload: ApprovalIntegrationPayload, build: ({ payload }) => approvalIntegrationPayload(payload) },
  })

export const EVENTS = {
  'message.created': defineEvent({
    scope: 'channel',
    payload: Type.Object({ message: MessageSchema }),
    frame: { description: 'A message was posted (REST, WebSocket or an integration).', summary: 'A message was posted' },
    webhook: { when: 'A message was posted in a channel the agent belongs to (its own messages included).' },
    integration: {
      when: "Any message was sent to a channel (including through the inbound endpoint). DMs only when one of the integration's `agent_ids` takes part (any agent when that list is empty).",
      payload: Type.Object(
        {
          message_id: Uuid,
          channel_id: Uuid,
          author_id: Uuid,
          author_type: ActorLower,
          text: Type.String(),
          thread_id: Type.Union([Uuid, Type.Null()], { description: 'The root message this one replies to (threads); null for a root or plain message.' }),
        },
        { additionalProperties: false },
      ),
      build: ({ payload: { message } }) => ({
        message_id: message.id,
        channel_id: message.channel_id,
        author_id: message.author_id,
        author_type: lower(message.author_type),
        text: message.text,
        thread_id: message.thread_id,
      }),
    },
  }),
  'message.updated': defineEvent({
    scope: 'channel',
    payload: Type.Object({ message: MessageSchema }),
    frame: { description: 'A message was edited; `message` is the edited message.', summary: 'A message was edited' },
    webhook: { when: 'A message was edited in a channel the agent belongs to.' },
    integration: null,
  }),
  'message.deleted': defineEvent({
    scope: 'channel',
    payload: Type.Object({
      message_id: Uuid,
      channel_id: Uuid,
      thread_id: Type.Union([Uuid, Type.Null()], { description: "The deleted reply's thread (its root's id), so that a client can recount it; null for a root or plain message." }),
    }),
    frame: {
      description: 'A message was deleted. A root that still has replies stays, as a placeholder (`deleted: true`, empty text) in the lists; the frame is sent all the same.',
      summary: 'A message was deleted',
    },
    webhook: { when: 'A message was deleted in a channel the agent belongs to.' },
    integration: null,
  }),
  // Mentions (docs/decisions.md, "Mentions"): one event per post or edit that notifies someone.
  'message.mentioned': defineEvent({
    scope: 'channel',
    payload: Type.Object({
      message: MessageSchema,
      mentioned_ids: Type.Array(Uuid, {
        description: 'The members this event notifies: on a post, everyone the message mentions but its author; on an edit, only those mentioned for the first time. A subset of `message.mentions`.',
      }),
      mentioned_agent_ids: Type.Array(Uuid, { description: 'The agents among `mentioned_ids` (webhooks and integrations are delivered for these).' }),
    }),
    frame: {
      description:
        'A message mentions you: sent only to the members in `mentioned_ids` (besides the `new_message` or `message_updated` every member gets). A socket opened with `only=mentions` receives only these.',
      summary: 'A message mentions you',
    },
    webhook: { when: "A message mentioning the agent was posted, or edited to mention it for the first time, in a channel the agent belongs to. Only the mentioned agents' webhooks receive it." },
    integration: {
      when: 'A message mentioned an agent the integration acts for (any agent when its `agent_ids` is empty), on posting or when an edit first mentions it.',
      payload: Type.Object(
        {
          message_id: Uuid,
          channel_id: Uuid,
          author_id: Uuid,
          author_type: ActorLower,
          text: Type.String(),
          mentions: Type.Array(Uuid, { description: 'Every member the message mentions.' }),
          mentioned_agent_ids: Type.Array(Uuid, { description: 'The agents this event notifies.' }),
        },
        { additionalProperties: false },
      ),
      build: ({ payload: { message, mentioned_agent_ids } }) => ({
        message_id: message.id,
        channel_id: message.channel_id,
        author_id: message.author_id,
        author_type: lower(message.author_type),
        text: message.text,
        mentions: message.mentions,
        mentioned_agent_ids,
      }),
    },
  }),
  // ---- streaming messages (docs/decisions.md, "Streaming messages (issue 25)") ----
  // The text between start and end travels as ephemeral `message_delta` frames
  // (src/modules/streams/deltas.ts), never as events: only the start, the Stop and the end are logged.
  'message.stream_started': defineEvent({
    scope: 'channel',
    payload: Type.Object({ message: MessageSchema }),
    frame: {
      description:
        'An agent started a streaming message (`stream_state` `streaming`, `text` its initial text). Its text then grows by `message_delta` frames (WebSocket and SSE, not in the event log) until `message_stream_finished`.',
      summary: 'An agent started a streaming message',
    },
    webhook: {
      when: 'An agent started a streaming message in a channel the agent belongs to. Only for a webhook subscribed to it: the finished message comes as `message.created` either way (webhooks never see the text in between).',
    },
    integration: null,
  }),
  'message.stream_finished': defineEvent({
    scope: 'channel',
    payload: Type.Object({ message: MessageSchema }),
    frame: {
      description:
        'A streaming message ended: `message.stream_state` is `complete` (finished), `cancelled` or `interrupted`, and `message.text` is its final text. A `new_message` with the same message follows (what webhooks and integrations receive as `message.created`).',
      summary: 'A streaming message ended',
    },
    webhook: null,
    integration: null,
  }),
  'message.stop_requested': defineEvent({
    scope: 'channel',
    payload: Type.Object({
      message_id: Uuid,
      channel_id: Uuid,
      thread_id: Type.Union([Uuid, Type.Null()], { description: "The streaming message's thread (its root's id); null for a root or plain message." }),
      author_id: { ...Uuid, description: 'The agent streaming the message: it should finish or cancel it now.' },
      requested_by_id: Uuid,
      requested_by_name: Type.String(),
    }),
    frame: {
      description:
        'A human pressed Stop on a streaming message: its agent should finish or cancel it; without either within 30 seconds it becomes `interrupted`. Sent to the members of the channel (clients show "stopping…").',
      summary: 'Stop was requested on a streaming message',
    },
    webhook: { when: "A human asked the agent to stop one of its streaming messages. Only the streaming agent's webhooks receive it." },
    integration: null,
  }),
  // ---- end streaming messages ----
  'channel.created': defineEvent({
    scope: 'channel',
    payload: Type.Object({ channel: EventChannelSchema, creator_id: Uuid, creator_type: ActorType }),
    frame: {
      description: 'A channel or DM was created (sent to its members; a regular channel also to the workspace owner, who reads every channel).',
      summary: 'A channel or DM was created',
    },
    webhook: { when: 'A channel (or DM) the agent is a member of was created.' },
    integration: {
      when: "A new channel was created (a DM only when one of the integration's `agent_ids` takes part, any agent when that list is empty).",
      payload: Type.Object(
        {
          channel_id: Uuid,
          name: Type.String(),
          description: Nullable(Type.String()),
          topic: Nullable(Type.String()),
          type: Type.Enum(['channel', 'dm']),
          created_at: Timestamp,
          creator_id: Nullable(Uuid),
          creator_type: Nullable(ActorLower),
        },
        { additionalProperties: false },
      ),
      build: ({ payload: { channel, creator_id, creator_type } }) => ({
        channel_id: channel.id,
        name: channel.name,
        description: channel.description,
        topic: channel.topic,
        type: channel.type,
        created_at: channel.created_at,
        creator_id,
        creator_type: lower(creator_type),
      }),
    },
  }),
  'channel.updated': defineEvent({
    scope: 'channel',
    payload: Type.Object({ channel: EventChannelSchema }),
    frame: { description: 'A channel was renamed or its description or topic changed.', summary: 'A channel was changed' },
    webhook: { when: 'A channel the agent belongs to was renamed or changed.' },
    integration: null,
  }),
  'channel.deleted': defineEvent({
    scope: 'channel',
    payload: Type.Object({ channel_id: Uuid }),
    frame: { description: 'A channel was deleted with its messages (sent to everyone who was a member).', summary: 'A channel was deleted' },
    webhook: { when: 'A channel the agent belonged to was deleted.' },
    integration: null,
  }),
  'member.joined': defineEvent({
    scope: 'channel',
    payload: Type.Object({
      channel_id: Uuid,
      member_id: Uuid,
      member_type: ActorType,
      member_name: Type.String(),
      channel: { ...EventChannelSchema, description: 'The channel joined, so that the new member can list it without a request.' },
    }),
    frame: {
      description:
        "A user or agent was added to the channel (also the creator of a new channel and both participants of a new DM). Sent to the channel's members, the new one included, and to the workspace owner for every regular channel.",
      summary: 'A member was added to a channel',
    },
    webhook: { when: 'A user or agent joined a channel the agent belongs to (the agent itself included).' },
    integration: {
      when: "A user or agent was added to a channel (in a DM only when one of the integration's `agent_ids` takes part, any agent when that list is empty).",
      payload: Type.Object({ channel_id: Uuid, member_id: Uuid, member_type: ActorLower, member_name: Nullable(Type.String()) }, { additionalProperties: false }),
      build: ({ payload }) => ({
        channel_id: payload.channel_id,
        member_id: payload.member_id,
        member_type: lower(payload.member_type),
        member_name: payload.member_name,
      }),
    },
  }),
  'member.left': defineEvent({
    scope: 'channel',
    payload: Type.Object({ channel_id: Uuid, member_id: Uuid, member_type: ActorType }),
    frame: {
      description: 'A member was removed from the channel. The removed member receives this frame too, then nothing more from the channel.',
      summary: 'A member was removed from a channel',
    },
    webhook: { when: 'A member left or was removed from a channel the agent belongs to (or the agent itself was removed).' },
    integration: null,
  }),
  // ---- reactions (docs/decisions.md, "Reactions") ----
  'reaction.added': defineEvent({
    scope: 'channel',
    payload: ReactionPayload,
    frame: { description: 'A member reacted to a message; `count` is how many members now reacted with that emoji.', summary: 'A reaction was added' },
    webhook: { when: 'A member reacted to a message in a channel the agent belongs to (the agent itself included).' },
    integration: {
      when: "A member reacted to a message (in a DM only when one of the integration's `agent_ids` takes part, any agent when that list is empty).",
      payload: ReactionIntegrationPayload,
      build: ({ payload }) => reactionIntegrationPayload(payload),
    },
  }),
  'reaction.removed': defineEvent({
    scope: 'channel',
    payload: ReactionPayload,
    frame: { description: 'A member took back a reaction; `count` is how many members still reacted with that emoji (0: none).', summary: 'A reaction was removed' },
    webhook: { when: 'A member took back a reaction in a channel the agent belongs to.' },
    integration: {
      when: "A member took back a reaction (in a DM only when one of the integration's `agent_ids` takes part, any agent when that list is empty).",
      payload: ReactionIntegrationPayload,
      build: ({ payload }) => reactionIntegrationPayload(payload),
    },
  }),
  // ---- approvals (docs/approvals.md): each outcome of a request, once ----
  'approval.decided': approvalEvent('An approval request was decided (approve, deny, edit or respond).', 'A person decided an approval request in a channel the agent belongs to'),
  'approval.expired': approvalEvent('An approval request expired undecided: `decision` is its `on_expiry`.', 'An approval request in a channel the agent belongs to expired undecided'),
  'approval.cancelled': approvalEvent('The requesting agent cancelled its approval request.', 'An approval request in a channel the agent belongs to was cancelled by its agent'),
  'agent.connected': defineEvent({
    scope: 'workspace',
    payload: Type.Object({ agent_id: Uuid, agent_name: Type.String(), connected_at: Timestamp }),
    frame: null,
    webhook: null,
    integration: {
      when: 'An agent authenticated on the WebSocket.',
      payload: Type.Object({ agent_id: Uuid, agent_name: Type.String(), connected_at: Timestamp }, { additionalProperties: false }),
      build: ({ payload }) => ({ agent_id: payload.agent_id, agent_name: payload.agent_name, connected_at: payload.connected_at }),
    },
  }),
} satisfies EventCatalog
