-- Public and private channels (issue 24, the channel browser). Channels that exist already were
-- members-only until now: they become private, so an upgrade shows no one a channel they could
-- not see before (their creator or an admin may make one public). New channels are public unless
-- created private.
ALTER TABLE "channels" ADD COLUMN "private" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "channels" ALTER COLUMN "private" SET DEFAULT false;
