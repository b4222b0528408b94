-- Threads (issue "Agents in conversation", item 1): a message may reply to a root message of its
-- channel (one level). The root carries its thread's summary, kept up to date in the statement
-- that inserts a reply, so that a page of history stays one query.
ALTER TABLE "messages" ADD COLUMN "thread_id" UUID;
ALTER TABLE "messages" ADD COLUMN "reply_count" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "messages" ADD COLUMN "last_reply_at" TIMESTAMPTZ(3);
ALTER TABLE "messages" ADD COLUMN "recent_replier_ids" UUID[] NOT NULL DEFAULT ARRAY[]::UUID[];
-- A deleted root that still has replies stays as a placeholder (empty text, no file).
ALTER TABLE "messages" ADD COLUMN "deleted" BOOLEAN NOT NULL DEFAULT false;

ALTER TABLE "messages" ADD CONSTRAINT "messages_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A thread's replies page by id; the channel's roots page by id without its replies.
CREATE INDEX "messages_thread_id_id_idx" ON "messages"("thread_id", "id" DESC) WHERE "thread_id" IS NOT NULL;
CREATE INDEX "messages_channel_roots_idx" ON "messages"("channel_id", "id" DESC) WHERE "thread_id" IS NULL;
