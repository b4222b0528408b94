-- DropIndex
DROP INDEX "outbox_events_published_at_id_idx";

-- DropIndex
DROP INDEX "outbox_events_planned_at_id_idx";

-- CreateIndex
CREATE INDEX "outbox_events_unpublished_idx" ON "outbox_events"("id") WHERE (published_at IS NULL);

-- CreateIndex
CREATE INDEX "outbox_events_unplanned_idx" ON "outbox_events"("id") WHERE (planned_at IS NULL);
