-- Search indexes a streamed message's final text only (issue 25): while a message is `streaming`
-- its search vector is NULL, so an append (one UPDATE of the row's text) does not run
-- to_tsvector over the whole text so far, nor change the GIN index; the vector is computed once,
-- when the stream ends and stream_state leaves 'streaming'. PostgreSQL 15 cannot change a
-- generated column's expression in place, so the column (and its index) is dropped and added
-- again: one rewrite of the table at deploy time.
ALTER TABLE "messages" DROP COLUMN "search";
ALTER TABLE "messages" ADD COLUMN "search" tsvector GENERATED ALWAYS AS (
    CASE WHEN "stream_state" = 'streaming' THEN NULL ELSE to_tsvector('english', "text") END
) STORED;
CREATE INDEX "messages_search_idx" ON "messages" USING GIN ("search");
