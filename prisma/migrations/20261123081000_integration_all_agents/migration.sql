-- AlterTable
ALTER TABLE "integrations" ADD COLUMN     "all_agents" BOOLEAN NOT NULL DEFAULT false;

-- Integrations stored with no agent list act for any agent (the reading before this column).
UPDATE "integrations" i SET "all_agents" = true
 WHERE NOT EXISTS (SELECT 1 FROM "integration_agents" ia WHERE ia."integration_id" = i."id");
