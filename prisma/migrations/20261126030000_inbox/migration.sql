-- The agent's inbox (issue 23): the filter `only` of webhooks and integrations, and the inbox
-- items written by the delivery planner (docs/realtime.md, "The inbox").
ALTER TABLE "webhooks" ADD COLUMN "only" TEXT;
ALTER TABLE "integrations" ADD COLUMN "only" TEXT;

CREATE TABLE "inbox_items" (
    "id" UUID NOT NULL,
    "member_id" UUID NOT NULL,
    "event_id" UUID NOT NULL,
    "event_type" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "channel_id" UUID NOT NULL,
    "body" JSONB NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "acked_at" TIMESTAMPTZ(3),

    CONSTRAINT "inbox_items_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "inbox_items_member_id_event_id_key" ON "inbox_items"("member_id", "event_id");
-- A member's unacknowledged items, oldest first: the only rows the inbox reads and counts.
CREATE INDEX "inbox_items_unacked_idx" ON "inbox_items"("member_id", "id") WHERE (acked_at IS NULL);
