-- Mentions (issue "Agents in conversation", item 2): the members a message mentions, resolved
-- when it is posted or edited (docs/decisions.md, "Mentions"), in order, without repeats.
ALTER TABLE "messages" ADD COLUMN "mentions" UUID[] NOT NULL DEFAULT ARRAY[]::UUID[];

-- GET /api/v1/mentions: the messages that mention a member (`mentions @> ARRAY[member]`).
CREATE INDEX "messages_mentions_idx" ON "messages" USING GIN ("mentions");
