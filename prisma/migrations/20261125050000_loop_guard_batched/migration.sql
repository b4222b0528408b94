-- Loop guard admissions in batches (issue 18: one shared channel went from 1,770 to 537 posts/s
-- when every agent post took the conversation's row lock in its own statement). Admits many agent
-- messages at once, in the order given: each conversation's row is locked once per batch, in
-- (channel, thread) order so two batches never wait on each other in a cycle. Answers one row per
-- item (its 1-based position): next = NULL when admitted (its time is recorded), '-infinity' when
-- the author is not a member (neither counted nor refused: the post answers 404 or 403), else the
-- time at which the next agent message will be admitted.
CREATE FUNCTION loop_guard_admit_many(p_channels UUID[], p_threads UUID[], p_authors UUID[], p_ats TIMESTAMPTZ[], p_max INTEGER, p_window_ms INTEGER)
RETURNS TABLE (ord INTEGER, next TIMESTAMPTZ)
LANGUAGE plpgsql
AS $$
DECLARE
  width INTERVAL := make_interval(secs => p_window_ms / 1000.0);
  conv RECORD;
  item RECORD;
  recent TIMESTAMPTZ[];
  lo INTEGER; -- recent[lo:] are the times within the current item's window (the list is sorted)
BEGIN
  FOR conv IN
    SELECT DISTINCT u.c, u.t FROM unnest(p_channels, p_threads) AS u(c, t) ORDER BY u.c, u.t
  LOOP
    INSERT INTO loop_guards (channel_id, thread_id)
      SELECT conv.c, conv.t WHERE EXISTS (SELECT 1 FROM channels WHERE id = conv.c)
      ON CONFLICT DO NOTHING;
    SELECT g.stamps INTO recent FROM loop_guards g WHERE g.channel_id = conv.c AND g.thread_id = conv.t FOR UPDATE;
    recent := ARRAY(SELECT s FROM unnest(recent) AS s ORDER BY s); -- concurrent batches may append out of order
    lo := 1;
    FOR item IN
      SELECT u.i::INTEGER AS i, u.a, u.at
        FROM unnest(p_channels, p_threads, p_authors, p_ats) WITH ORDINALITY AS u(c, t, a, at, i)
       WHERE u.c = conv.c AND u.t = conv.t
       ORDER BY u.at, u.i
    LOOP
      ord := item.i;
      IF recent IS NULL -- the channel was deleted meanwhile
         OR NOT EXISTS (SELECT 1 FROM channel_members WHERE channel_id = conv.c AND member_id = item.a) THEN
        next := '-infinity';
        RETURN NEXT;
        CONTINUE;
      END IF;
      -- One pass over the list per batch, not per item: the items are taken in time order.
      WHILE lo <= cardinality(recent) AND recent[lo] <= item.at - width LOOP
        lo := lo + 1;
      END LOOP;
      IF cardinality(recent) - lo + 1 >= p_max THEN
        -- The oldest of the last p_max leaves the window first.
        next := recent[cardinality(recent) - p_max + 1] + width;
      ELSE
        recent := recent || item.at;
        next := NULL;
      END IF;
      RETURN NEXT;
    END LOOP;
    IF recent IS NOT NULL THEN
      UPDATE loop_guards SET stamps = recent[lo:] WHERE channel_id = conv.c AND thread_id = conv.t;
    END IF;
  END LOOP;
END
$$;

-- The single-item function is replaced by the batched one.
DROP FUNCTION loop_guard_admit(UUID, UUID, UUID, TIMESTAMPTZ, INTEGER, INTEGER);
