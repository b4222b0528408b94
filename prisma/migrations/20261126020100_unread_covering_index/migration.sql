-- Unread counts without reading the table (issue 24): the (channel_id, id) index of messages also
-- carries author_id, so "messages after my read marker not written by me" is an index-only scan
-- (docs/performance.md, "Sidebar at a million messages"). Same name and key as the index it
-- replaces: history pages use it as before. Prisma's schema cannot say INCLUDE; the key matches.
DROP INDEX "messages_channel_id_id_idx";
CREATE INDEX "messages_channel_id_id_idx" ON "messages"("channel_id", "id" DESC) INCLUDE ("author_id");
