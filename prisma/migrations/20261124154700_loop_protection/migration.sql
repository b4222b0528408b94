-- Loop protection (issue 16 item 3): the workspace settings of the guard, what caused a message
-- and its depth in an agent chain, opting out of one's own messages, and the guard's state.

-- Workspace settings: at most N agent messages in one channel (or thread) within a window with
-- no human message in between (0 = off), and the longest agent chain (0 = off).
ALTER TABLE "instance" ADD COLUMN "loop_guard_max_messages" INTEGER NOT NULL DEFAULT 20;
ALTER TABLE "instance" ADD COLUMN "loop_guard_window_seconds" INTEGER NOT NULL DEFAULT 60;
ALTER TABLE "instance" ADD COLUMN "loop_guard_max_depth" INTEGER NOT NULL DEFAULT 20;

-- What the poster reacted to (an event id, optional) and the message's place in an agent chain
-- (0 for a human's message; an agent's is one more than the message it reacts to).
ALTER TABLE "messages" ADD COLUMN "in_reply_to_event" UUID;
ALTER TABLE "messages" ADD COLUMN "chain_depth" INTEGER NOT NULL DEFAULT 0;

-- Deliveries of the endpoint's own agents' messages (the spec's default: included).
ALTER TABLE "webhooks" ADD COLUMN "include_own_messages" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "integrations" ADD COLUMN "include_own_messages" BOOLEAN NOT NULL DEFAULT true;

-- The guard's state per conversation: the times of the latest agent messages (at most N of
-- them) since the last human message. thread_id is the nil UUID for the channel itself; a
-- thread has its own row.
CREATE TABLE "loop_guards" (
    "channel_id" UUID NOT NULL,
    "thread_id" UUID NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000',
    "stamps" TIMESTAMPTZ(3)[] NOT NULL DEFAULT ARRAY[]::TIMESTAMPTZ(3)[],

    CONSTRAINT "loop_guards_pkey" PRIMARY KEY ("channel_id","thread_id")
);

ALTER TABLE "loop_guards" ADD CONSTRAINT "loop_guards_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Admits one agent message into a conversation, atomically across every server: NULL when it is
-- admitted (its time is recorded), else the time at which the next agent message will be. An
-- author who is not a member of the channel is neither counted nor refused here ('-infinity'):
-- the post itself answers for that (404 or 403), so the guard reveals nothing to strangers.
CREATE FUNCTION loop_guard_admit(p_channel UUID, p_thread UUID, p_author UUID, p_at TIMESTAMPTZ, p_max INTEGER, p_window_ms INTEGER)
RETURNS TIMESTAMPTZ
LANGUAGE plpgsql
AS $$
DECLARE
  horizon TIMESTAMPTZ := p_at - make_interval(secs => p_window_ms / 1000.0);
  recent TIMESTAMPTZ[];
BEGIN
  IF NOT EXISTS (SELECT 1 FROM channel_members WHERE channel_id = p_channel AND member_id = p_author) THEN
    RETURN '-infinity';
  END IF;
  INSERT INTO loop_guards (channel_id, thread_id) VALUES (p_channel, p_thread) ON CONFLICT DO NOTHING;
  SELECT ARRAY(SELECT s FROM unnest(g.stamps) AS s WHERE s > horizon ORDER BY s)
    INTO recent
    FROM loop_guards g WHERE g.channel_id = p_channel AND g.thread_id = p_thread
    FOR UPDATE;
  IF recent IS NULL THEN
    RETURN '-infinity'; -- the channel was deleted meanwhile
  END IF;
  IF cardinality(recent) >= p_max THEN
    -- The oldest of the last p_max leaves the window first.
    RETURN recent[cardinality(recent) - p_max + 1] + make_interval(secs => p_window_ms / 1000.0);
  END IF;
  UPDATE loop_guards SET stamps = recent || p_at WHERE channel_id = p_channel AND thread_id = p_thread;
  RETURN NULL;
END
$$;
