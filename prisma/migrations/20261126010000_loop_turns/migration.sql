-- Loop protection counts turns, not messages (issue 28; docs/loops.md, docs/decisions.md "Loop
-- protection counts turns"). A turn is a change of author between agents, with no human message
-- in between, where the new author could have been answering: it was listening (a webhook, an
-- integration acting for it, a socket) and the message it follows is within the window. One agent
-- posting any number of messages in a row, and agents that listen to nothing, take no turns.

-- Settings: an explicit on/off, and the limit now counts turns (renamed). A guard that was off
-- (0 messages) is off with the default of 20 turns.
ALTER TABLE "instance" ADD COLUMN "loop_guard_enabled" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "instance" RENAME COLUMN "loop_guard_max_messages" TO "loop_guard_max_turns";
UPDATE "instance" SET "loop_guard_enabled" = false, "loop_guard_max_turns" = 20 WHERE "loop_guard_max_turns" = 0;

-- The state per conversation: who posted last and when (the message a turn follows); stamps are
-- now the times of the turns within the window.
ALTER TABLE "loop_guards" ADD COLUMN "last_author" UUID;
ALTER TABLE "loop_guards" ADD COLUMN "last_at" TIMESTAMPTZ(3);
UPDATE "loop_guards" SET "stamps" = ARRAY[]::TIMESTAMPTZ(3)[];

DROP FUNCTION loop_guard_admit_many(UUID[], UUID[], UUID[], TIMESTAMPTZ[], INTEGER, INTEGER);

-- Admits the messages of one statement (the batched insert or a single post's insert calls it in
-- its own WITH clause: no round trip of its own). The statement works out, set-based, whether each
-- author is a member (p_member) and could hear the conversation (p_listening: the socket it posts
-- over, a webhook, an integration acting for it), so the function runs no query per item: it
-- locks each conversation's row once, in (channel, thread) order so two statements never wait on
-- each other in a cycle, and takes its items in (at, position) order. One row per item (its
-- 1-based position):
--   next = NULL         admitted (an agent's post is recorded; a human's clears the conversation)
--   next = '-infinity'  the author is not a member: neither counted nor refused (the post answers)
--   next = a time       refused: the turn would be one too many; when the oldest turn leaves the window
CREATE FUNCTION loop_guard_admit_many(p_channels UUID[], p_threads UUID[], p_authors UUID[], p_agent BOOLEAN[], p_member BOOLEAN[], p_listening BOOLEAN[], p_ats TIMESTAMPTZ[], p_max INTEGER, p_window_ms INTEGER)
RETURNS TABLE (ord INTEGER, next TIMESTAMPTZ)
LANGUAGE plpgsql
AS $$
DECLARE
  width INTERVAL := make_interval(secs => p_window_ms / 1000.0);
  conv RECORD;
  item RECORD;
  turns TIMESTAMPTZ[];
  last_author_ UUID;
  last_at_ TIMESTAMPTZ;
  found_ BOOLEAN;
  changed BOOLEAN;
  lo INTEGER; -- turns[lo:] are the turns within the current item's window (the list is sorted)
BEGIN
  FOR conv IN
    SELECT u.c, coalesce(u.t, '00000000-0000-0000-0000-000000000000'::uuid) AS t, bool_or(u.agent AND u.member) AS agents
      FROM unnest(p_channels, p_threads, p_agent, p_member) AS u(c, t, agent, member)
     GROUP BY 1, 2 ORDER BY 1, 2
  LOOP
    found_ := false;
    SELECT g.stamps, g.last_author, g.last_at, true INTO turns, last_author_, last_at_, found_
      FROM loop_guards g WHERE g.channel_id = conv.c AND g.thread_id = conv.t FOR UPDATE;
    IF NOT coalesce(found_, false) AND conv.agents THEN
      INSERT INTO loop_guards (channel_id, thread_id)
        SELECT conv.c, conv.t WHERE EXISTS (SELECT 1 FROM channels WHERE id = conv.c)
        ON CONFLICT DO NOTHING;
      SELECT g.stamps, g.last_author, g.last_at, true INTO turns, last_author_, last_at_, found_
        FROM loop_guards g WHERE g.channel_id = conv.c AND g.thread_id = conv.t FOR UPDATE;
    END IF;
    found_ := coalesce(found_, false);
    turns := coalesce(turns, '{}');
    changed := false;
    lo := 1;
    FOR item IN
      SELECT u.i::INTEGER AS i, u.a, u.agent, u.member, coalesce(u.l, false) AS listening, u.at
        FROM unnest(p_channels, p_threads, p_authors, p_agent, p_member, p_listening, p_ats) WITH ORDINALITY AS u(c, t, a, agent, member, l, at, i)
       WHERE u.c = conv.c AND coalesce(u.t, '00000000-0000-0000-0000-000000000000'::uuid) = conv.t
       ORDER BY u.at, u.i
    LOOP
      ord := item.i;
      IF NOT item.member THEN
        next := '-infinity';
      ELSIF NOT item.agent THEN
        -- A human spoke: the conversation starts over.
        turns := '{}';
        lo := 1;
        last_author_ := NULL;
        last_at_ := NULL;
        changed := found_;
        next := NULL;
      ELSIF NOT found_ THEN
        next := '-infinity'; -- the channel was deleted meanwhile
      ELSE
        WHILE lo <= cardinality(turns) AND turns[lo] <= item.at - width LOOP
          lo := lo + 1;
        END LOOP;
        -- A turn: another agent posted last, within the window, and this one could have heard it.
        IF item.listening AND last_author_ IS NOT NULL AND last_author_ <> item.a AND last_at_ > item.at - width THEN
          IF cardinality(turns) - lo + 1 >= p_max THEN
            -- The oldest of the last p_max turns leaves the window first.
            next := turns[cardinality(turns) - p_max + 1] + width;
            RETURN NEXT;
            CONTINUE;
          END IF;
          turns := turns || item.at;
        END IF;
        last_author_ := item.a;
        last_at_ := greatest(item.at, last_at_);
        changed := true;
        next := NULL;
      END IF;
      RETURN NEXT;
    END LOOP;
    IF changed THEN
      UPDATE loop_guards SET stamps = turns[lo:], last_author = last_author_, last_at = last_at_
       WHERE channel_id = conv.c AND thread_id = conv.t;
    END IF;
  END LOOP;
END
$$;
