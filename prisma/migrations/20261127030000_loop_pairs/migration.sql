-- Loop protection counts the turns of one pair of agents (issue 28; docs/loops.md, docs/decisions.md
-- "Loop protection counts turns"). A turn is an agent's post that follows, within the window, a
-- message of another agent it could have heard (a webhook, an integration acting for it, a socket).
-- Turns count only while the same two agents take them: a turn between another pair starts the
-- count over, as a human message does. Several agents posting on their own schedules into one
-- channel (listening or not) therefore rarely make more than a few turns of one pair in a row,
-- while an echo pair makes nothing else.
--
-- The message a post follows is read from the messages table by the statement that inserts the
-- post (one index probe per conversation), so a post that takes no turn reads no guard state and
-- writes none: the guard's row is locked and written only for turns, and for a human message where
-- turns were counted.

ALTER TABLE "loop_guards" DROP COLUMN "last_author";
ALTER TABLE "loop_guards" DROP COLUMN "last_at";
-- The two agents whose turns are counted, sorted (null: none yet, or a human spoke).
ALTER TABLE "loop_guards" ADD COLUMN "pair" UUID[];
UPDATE "loop_guards" SET "stamps" = ARRAY[]::TIMESTAMPTZ(3)[];

DROP FUNCTION loop_guard_admit_many(UUID[], UUID[], UUID[], BOOLEAN[], BOOLEAN[], BOOLEAN[], TIMESTAMPTZ[], INTEGER, INTEGER);

-- Admits the turns of one statement (the batched insert or a single post's insert calls it in its
-- own WITH clause, only when the statement holds a turn or a human message where turns were
-- counted). Items: p_prev is the author of the message an agent's post follows (a turn); NULL for
-- a human's message (the count starts over). It locks each conversation's row once, in
-- (channel, thread) order so two statements never wait on each other in a cycle, and takes its
-- items in (at, position) order. One row per item (its 1-based position):
--   next = NULL         admitted (a turn is recorded; a human's message clears the count)
--   next = '-infinity'  the channel is gone: not stored
--   next = a time       refused: the turn would be one too many; when the oldest turn leaves the window
CREATE FUNCTION loop_guard_admit_turns(p_channels UUID[], p_threads UUID[], p_authors UUID[], p_prev UUID[], p_ats TIMESTAMPTZ[], p_max INTEGER, p_window_ms INTEGER)
RETURNS TABLE (ord INTEGER, next TIMESTAMPTZ)
LANGUAGE plpgsql
AS $$
DECLARE
  width INTERVAL := make_interval(secs => p_window_ms / 1000.0);
  conv RECORD;
  item RECORD;
  turns TIMESTAMPTZ[];
  pair_ UUID[];
  this_pair UUID[];
  found_ BOOLEAN;
  changed BOOLEAN;
  lo INTEGER; -- turns[lo:] are the turns within the current item's window (the list is sorted)
BEGIN
  FOR conv IN
    SELECT u.c, coalesce(u.t, '00000000-0000-0000-0000-000000000000'::uuid) AS t, bool_or(u.p IS NOT NULL) AS any_turn
      FROM unnest(p_channels, p_threads, p_prev) AS u(c, t, p)
     GROUP BY 1, 2 ORDER BY 1, 2
  LOOP
    found_ := false;
    SELECT g.stamps, g.pair, true INTO turns, pair_, found_
      FROM loop_guards g WHERE g.channel_id = conv.c AND g.thread_id = conv.t FOR UPDATE;
    IF NOT coalesce(found_, false) AND conv.any_turn THEN
      INSERT INTO loop_guards (channel_id, thread_id)
        SELECT conv.c, conv.t WHERE EXISTS (SELECT 1 FROM channels WHERE id = conv.c)
        ON CONFLICT DO NOTHING;
      SELECT g.stamps, g.pair, true INTO turns, pair_, found_
        FROM loop_guards g WHERE g.channel_id = conv.c AND g.thread_id = conv.t FOR UPDATE;
    END IF;
    found_ := coalesce(found_, false);
    turns := coalesce(turns, '{}');
    changed := false;
    lo := 1;
    FOR item IN
      SELECT u.i::INTEGER AS i, u.a, u.p, u.at
        FROM unnest(p_channels, p_threads, p_authors, p_prev, p_ats) WITH ORDINALITY AS u(c, t, a, p, at, i)
       WHERE u.c = conv.c AND coalesce(u.t, '00000000-0000-0000-0000-000000000000'::uuid) = conv.t
       ORDER BY u.at, u.i
    LOOP
      ord := item.i;
      next := NULL;
      IF item.p IS NULL THEN
        -- A human spoke: the count starts over.
        IF found_ AND (cardinality(turns) > 0 OR pair_ IS NOT NULL) THEN
          turns := '{}';
          pair_ := NULL;
          lo := 1;
          changed := true;
        END IF;
      ELSIF NOT found_ THEN
        next := '-infinity'; -- the channel was deleted meanwhile
      ELSE
        this_pair := ARRAY[least(item.a, item.p), greatest(item.a, item.p)];
        IF pair_ IS DISTINCT FROM this_pair THEN
          -- Another pair takes a turn: only the same two agents' turns add up.
          turns := '{}';
          pair_ := this_pair;
          lo := 1;
        END IF;
        WHILE lo <= cardinality(turns) AND turns[lo] <= item.at - width LOOP
          lo := lo + 1;
        END LOOP;
        IF cardinality(turns) - lo + 1 >= p_max THEN
          -- The oldest of the last p_max turns leaves the window first.
          next := turns[cardinality(turns) - p_max + 1] + width;
        ELSE
          turns := turns || item.at;
        END IF;
        changed := true;
      END IF;
      RETURN NEXT;
    END LOOP;
    IF changed THEN
      UPDATE loop_guards SET stamps = turns[lo:], pair = pair_
       WHERE channel_id = conv.c AND thread_id = conv.t;
    END IF;
  END LOOP;
END
$$;
