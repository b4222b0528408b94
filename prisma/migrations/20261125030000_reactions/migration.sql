-- Reactions: one row per (message, member, emoji). A message's reactions go with it.
CREATE TABLE "message_reactions" (
    "message_id" UUID NOT NULL,
    "member_id" UUID NOT NULL,
    "member_type" "actor_type" NOT NULL,
    "emoji" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "message_reactions_pkey" PRIMARY KEY ("message_id","emoji","member_id")
);

ALTER TABLE "message_reactions" ADD CONSTRAINT "message_reactions_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;
