-- An agent's status on a thread without a stream (issue 25, item 3): what it is doing before it
-- answers in the thread. One row per thread root and agent; gone when the agent clears it, posts
-- (or starts streaming) a reply in the thread, or leaves it for STREAM_IDLE_SECONDS (the stream
-- sweep). The root's deletion takes its statuses with it.
CREATE TABLE "thread_statuses" (
    "root_id" UUID NOT NULL,
    "agent_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "agent_name" TEXT NOT NULL,
    "status" JSONB NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "thread_statuses_pkey" PRIMARY KEY ("root_id", "agent_id"),
    CONSTRAINT "thread_statuses_root_id_fkey" FOREIGN KEY ("root_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "thread_statuses_updated_at_idx" ON "thread_statuses"("updated_at");
