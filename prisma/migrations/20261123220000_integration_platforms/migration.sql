-- AlterEnum
ALTER TYPE "integration_platform" ADD VALUE 'langgraph' AFTER 'langchain';
ALTER TYPE "integration_platform" ADD VALUE 'openclaw' AFTER 'autogen';
