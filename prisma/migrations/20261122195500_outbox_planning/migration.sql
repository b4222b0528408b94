-- AlterTable
ALTER TABLE "outbox_events" ADD COLUMN     "planned_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "worker_cursors" (
    "name" TEXT NOT NULL,
    "position" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "worker_cursors_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "outbox_events_planned_at_id_idx" ON "outbox_events"("planned_at", "id");
