-- Self-registration modes (issue 14 item 12): the workspace setting, and accounts that wait for
-- the owner's approval.
ALTER TABLE "instance" ADD COLUMN "registration_mode" TEXT NOT NULL DEFAULT 'approval';
ALTER TABLE "users" ADD COLUMN "awaiting_approval" BOOLEAN NOT NULL DEFAULT false;
