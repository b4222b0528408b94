-- Read markers: the newest message a member has read in a channel or DM (unread counts).
ALTER TABLE "channel_members" ADD COLUMN "last_read_message_id" UUID;
