// Streaming messages (issue 25; docs/decisions.md, "Streaming messages (issue 25)"): the bodies
// and answers of the stream routes, and the documented limits.
import { Type, type Static } from 'typebox'
import { Uuid } from '../../schemas/common.ts'

/** The most one append may carry, in UTF-8 bytes (a batch: each of its appends). */
export const MAX_APPEND_BYTES = 16 * 1024
/** Appends in one batch request. */
export const MAX_BATCH_APPENDS = 100
/** Append requests per second per stream (a batch counts once), on each instance. */
export const APPENDS_PER_SECOND = 50
/** Messages one agent may have streaming at once. */
export const MAX_CONCURRENT_STREAMS = 10
/** A Stop not answered (finish or cancel) within this long ends the stream `interrupted`. */
export const STOP_GRACE_MS = 30_000
/**
 * Two delta frames of one stream are at least this far apart (at most 12.5 a second; 10 for a
 * stream appending 20 times a second), and no append waits longer for its frame (./deltas.ts).
 */
export const DELTA_FRAME_GAP_MS = 80
/** How long an append waits, at most, before the message row holds it (history reads the live text meanwhile). */
export const STREAM_FLUSH_MS = 1000

const AppendText = Type.String({ minLength: 1, description: `Text to add at the end (at most ${MAX_APPEND_BYTES.toLocaleString('en-US')} bytes in UTF-8).` })

export const AppendBody = Type.Union(
  [
    Type.Object({ append: AppendText }, { additionalProperties: false }),
    Type.Object(
      { appends: Type.Array(AppendText, { minItems: 1, maxItems: MAX_BATCH_APPENDS, description: `Several appends in order (at most ${MAX_BATCH_APPENDS}).` }) },
      { additionalProperties: false },
    ),
  ],
  { description: '`{"append": "…"}`, or a batch `{"appends": ["…", "…"]}`.' },
)
export type AppendInput = Static<typeof AppendBody>

export const AppendResult = Type.Object(
  {
    message_id: Uuid,
    seq: Type.Integer({ minimum: 1, description: "The sequence number of this request's last append (the stream's appends are numbered from 1)." }),
    length: Type.Integer({ minimum: 0, description: "The message's text length after the append, in UTF-16 code units (as `message_delta` offsets count)." }),
  },
  { additionalProperties: false, title: 'StreamAppendResult' },
)
export type AppendResultDto = Static<typeof AppendResult>

export const FinishBody = Type.Object(
  {
    text: Type.Optional(
      Type.String({
        description:
          'Optional: the final text, replacing what was appended (same rules as a post: not blank, at most MAX_MESSAGE_LENGTH characters). Omitted: the text appended so far, which must not be blank.',
      }),
    ),
  },
  { additionalProperties: false },
)

export const FinishMultipart = Type.Object(
  {
    text: Type.Optional(Type.String({ description: 'Optional: the final text, as in the JSON body; with a file it may be empty.' })),
    file: Type.Optional(
      Type.Unsafe<Blob>({ type: 'string', format: 'binary', contentMediaType: 'application/octet-stream', description: 'One file, at most 10 MiB (10,485,760 bytes), attached to the message.' }),
    ),
  },
  { description: 'Fields `text` and `file`, both optional: finishing with a file attaches it, as a post with a file does.' },
)

// ---- status: what the agent is doing (a title and steps, the shape of Slack's task updates) ----
export const MAX_STATUS_STEPS = 20
export const StepState = Type.Union([Type.Literal('pending'), Type.Literal('in_progress'), Type.Literal('complete'), Type.Literal('error')])
export const StreamStatus = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200, description: 'What the agent is doing, e.g. "Searching the docs…".' }),
    steps: Type.Array(Type.Object({ title: Type.String({ minLength: 1, maxLength: 200 }), state: StepState }, { additionalProperties: false }), {
      maxItems: MAX_STATUS_STEPS,
      description: `The plan, in order (at most ${MAX_STATUS_STEPS}): each step \`pending\`, \`in_progress\`, \`complete\` or \`error\`.`,
    }),
  },
  { additionalProperties: false, title: 'StreamStatus' },
)
export type StreamStatusDto = Static<typeof StreamStatus>

export const StreamInfo = Type.Object(
  {
    message_id: Uuid,
    stream_state: Type.Union([Type.Literal('streaming'), Type.Literal('complete'), Type.Literal('cancelled'), Type.Literal('interrupted')]),
    seq: Type.Integer({ minimum: 0, description: 'Appends so far (0 once the stream has ended: the message holds the text).' }),
    status: Type.Union([StreamStatus, Type.Null()], { description: "The agent's status on its stream; null when none is set, and once it ended." }),
    stop_requested: Type.Boolean({ description: 'A person pressed Stop and the agent has not ended the stream yet (show "stopping…").' }),
  },
  { additionalProperties: false, title: 'StreamInfo' },
)
export type StreamInfoDto = Static<typeof StreamInfo>

// ---- status on a thread without a stream ----
export const ThreadStatusEntry = Type.Object(
  {
    agent_id: Uuid,
    agent_name: Type.String(),
    status: StreamStatus,
    updated_at: Type.String({ format: 'date-time', description: 'When the agent last set it (it is cleared STREAM_IDLE_SECONDS after).' }),
  },
  { additionalProperties: false, title: 'ThreadStatusEntry' },
)
export const ThreadStatuses = Type.Object(
  {
    channel_id: Uuid,
    thread_id: Uuid,
    statuses: Type.Array(ThreadStatusEntry, { description: 'One per agent with a status in the thread, oldest set first.' }),
  },
  { additionalProperties: false, title: 'ThreadStatuses' },
)
export type ThreadStatusesDto = Static<typeof ThreadStatuses>
