-- The loop guard reads the message a post follows again once it holds the conversation's row
-- (docs/decisions.md, "The loop guard reads the previous message under its lock"). The statement
-- that inserts a post reads the newest message of the conversation from its own snapshot, taken
-- when it started; with several batched inserts in flight, another statement may have committed a
-- newer message meanwhile, often a post of the same agent. A burst of one agent's posts spread
-- over concurrent statements was then counted as many turns with the agent before it, and under
-- load three agents posting on their own schedules were refused. The function now takes, for each
-- post whose previous message came from the table (p_fresh: the first of its conversation in the
-- statement), the newest message committed when it holds the guard's row: an earlier statement
-- that counted a turn holds that row until it commits, so its message is seen. A post whose
-- previous message is its author's own, a human's, or older than the window takes no turn.

DROP FUNCTION loop_guard_admit_turns(UUID[], UUID[], UUID[], UUID[], TIMESTAMPTZ[], INTEGER, INTEGER);

CREATE FUNCTION loop_guard_admit_turns(p_channels UUID[], p_threads UUID[], p_authors UUID[], p_prev UUID[], p_fresh BOOLEAN[], p_ats TIMESTAMPTZ[], p_max INTEGER, p_window_ms INTEGER)
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
  prev_ UUID;
  last_author UUID;
  last_type actor_type;
  last_at TIMESTAMPTZ;
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
      SELECT u.i::INTEGER AS i, u.a, u.p, u.fresh, u.at
        FROM unnest(p_channels, p_threads, p_authors, p_prev, p_fresh, p_ats) WITH ORDINALITY AS u(c, t, a, p, fresh, at, i)
       WHERE u.c = conv.c AND coalesce(u.t, '00000000-0000-0000-0000-000000000000'::uuid) = conv.t
       ORDER BY u.at, u.i
    LOOP
      ord := item.i;
      next := NULL;
      prev_ := item.p;
      IF prev_ IS NOT NULL AND item.fresh AND found_ THEN
        -- This query sees what was committed up to now, not the statement's snapshot: the newest
        -- message of the conversation (of its roots, or of the thread with its root).
        last_author := NULL;
        IF conv.t = '00000000-0000-0000-0000-000000000000'::uuid THEN
          SELECT m.author_id, m.author_type, m.created_at INTO last_author, last_type, last_at
            FROM messages m WHERE m.channel_id = conv.c AND m.thread_id IS NULL ORDER BY m.id DESC LIMIT 1;
        ELSE
          SELECT u.author_id, u.author_type, u.created_at INTO last_author, last_type, last_at FROM (
            (SELECT m.id, m.author_id, m.author_type, m.created_at FROM messages m WHERE m.thread_id = conv.t ORDER BY m.id DESC LIMIT 1)
            UNION ALL SELECT m.id, m.author_id, m.author_type, m.created_at FROM messages m WHERE m.id = conv.t) u
           ORDER BY u.id DESC LIMIT 1;
        END IF;
        IF last_author IS NOT NULL AND last_type <> 'AGENT' THEN
          prev_ := NULL; -- a human spoke meanwhile: the count starts over, as below
        ELSIF last_author IS NOT NULL AND last_author <> item.a AND last_at > item.at - width THEN
          prev_ := last_author; -- a turn, of the pair with the newest message's author
        ELSE
          -- Its own message, or nothing within the window: no turn; nothing to record.
          RETURN NEXT;
          CONTINUE;
        END IF;
      END IF;
      IF prev_ IS NULL THEN
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
        this_pair := ARRAY[least(item.a, prev_), greatest(item.a, prev_)];
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
