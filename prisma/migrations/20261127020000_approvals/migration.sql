-- Human approval in the conversation (issue 26, docs/approvals.md): an agent's message may carry
-- an approval request; its decision, cancellation or expiry is recorded on this row, once.
CREATE TABLE "approvals" (
    "message_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "requester_id" UUID NOT NULL,
    "action" TEXT NOT NULL,
    "arguments" JSONB NOT NULL,
    "summary" TEXT NOT NULL,
    "choices" TEXT[] NOT NULL,
    "approvers" JSONB NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "on_expiry" TEXT NOT NULL DEFAULT 'deny',
    "digest" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "decision" TEXT,
    "decided_by" UUID,
    "decided_by_name" TEXT,
    "decided_at" TIMESTAMPTZ(3),
    "comment" TEXT,
    "final_arguments" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "approvals_pkey" PRIMARY KEY ("message_id")
);

ALTER TABLE "approvals" ADD CONSTRAINT "approvals_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;
-- The expiry sweep reads the next pending expiry, and expires what is due, from this index only.
CREATE INDEX "approvals_pending_expiry_idx" ON "approvals"("expires_at") WHERE (status = 'pending');
-- "Needs your decision": the pending requests of the caller's channels.
CREATE INDEX "approvals_pending_channel_idx" ON "approvals"("channel_id") WHERE (status = 'pending');
