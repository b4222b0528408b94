-- People (issue 24): a human's avatar, the session version a password change increments (tokens
-- of older versions stop working), and presence for humans (when a socket last opened or closed).
ALTER TABLE "users" ADD COLUMN "avatar_url" TEXT;
ALTER TABLE "users" ADD COLUMN "session_version" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "users" ADD COLUMN "last_seen_at" TIMESTAMPTZ(3);
