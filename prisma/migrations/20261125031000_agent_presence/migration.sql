-- Presence and status of agents: when an agent's socket was last seen (connect or disconnect),
-- and a short status text with its expiry.
ALTER TABLE "agents" ADD COLUMN "last_seen_at" TIMESTAMPTZ(3);
ALTER TABLE "agents" ADD COLUMN "status_text" TEXT;
ALTER TABLE "agents" ADD COLUMN "status_expires_at" TIMESTAMPTZ(3);
