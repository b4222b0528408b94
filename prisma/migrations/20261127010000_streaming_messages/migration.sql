-- Streaming messages (issue 25). Every message has a stream state: `complete` for every message
-- posted whole (all existing ones), `streaming` while its agent appends, then `complete`,
-- `cancelled` or `interrupted`. The live bookkeeping of a stream (its sequence number, last
-- append, a Stop request, its status) is a row of message_streams that exists only while the
-- message is `streaming`: the idle sweep reads that small table, never the messages.
ALTER TABLE "messages" ADD COLUMN "stream_state" TEXT NOT NULL DEFAULT 'complete';
ALTER TABLE "messages" ADD CONSTRAINT "messages_stream_state_check" CHECK ("stream_state" IN ('streaming', 'complete', 'cancelled', 'interrupted'));

CREATE TABLE "message_streams" (
    "message_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "author_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL DEFAULT 0,
    -- The text's length in UTF-16 code units (what a browser's String#length counts): delta offsets.
    "utf16_length" INTEGER NOT NULL DEFAULT 0,
    "last_append_at" TIMESTAMPTZ(3) NOT NULL,
    "stop_requested_at" TIMESTAMPTZ(3),
    "stop_requested_by" UUID,
    "status" JSONB,
    CONSTRAINT "message_streams_pkey" PRIMARY KEY ("message_id"),
    CONSTRAINT "message_streams_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "message_streams_author_id_idx" ON "message_streams"("author_id");
CREATE INDEX "message_streams_last_append_at_idx" ON "message_streams"("last_append_at");
