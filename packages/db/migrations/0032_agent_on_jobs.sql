-- Every agent run (root jobs and sub-agents) moves into jobs before agent_runs loses the common columns.
-- A sub-agent whose root is gone could not be reached by anything (it would have gone with it): it goes now.
DELETE FROM "agent_runs" "r" WHERE "r"."parent_id" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "agent_runs" "o" WHERE "o"."id" = "r"."root_id");
--> statement-breakpoint
-- state -> status + outcome: running and cancelling stay, succeeded is completed, cancelled cancelled, every other end
-- failed with the state as its outcome; the text error becomes a FailureRecord. A sub-agent's job parent is its root.
-- A live root is judged by the stranded-job sweeper by its workflow id; a live sub-agent only once its workflow wrote
-- its first event (startAgentRun records its workflow id from now on: before, its parent may not have started it yet).
-- Expiry is data now: a thread goes whole, once its last turn expired and none runs, so every ended turn of a thread
-- without a live turn expires with the thread's last (the latest expires_at); a turn of a running thread, and any
-- sub-agent, has none of its own.
INSERT INTO "jobs" ("id", "team_id", "kind", "status", "outcome", "parent_id", "options", "error", "credits_used", "workflow_id", "created_at", "started_at", "finished_at", "expires_at")
SELECT "r"."id", "r"."team_id", 'agent',
  CASE "r"."state" WHEN 'running' THEN 'running' WHEN 'cancelling' THEN 'cancelling' WHEN 'succeeded' THEN 'completed' WHEN 'cancelled' THEN 'cancelled' ELSE 'failed' END,
  CASE WHEN "r"."state" IN ('running', 'cancelling', 'succeeded', 'cancelled') THEN NULL ELSE "r"."state" END,
  CASE WHEN "r"."parent_id" IS NULL THEN NULL ELSE "r"."root_id" END,
  "r"."options",
  CASE WHEN "r"."error" IS NULL THEN NULL ELSE jsonb_build_object('kind', 'AGENT', 'code', "r"."state", 'message', "r"."error") END,
  "r"."credits_used",
  CASE WHEN "r"."state" IN ('running', 'cancelling') AND ("r"."parent_id" IS NULL OR EXISTS (SELECT 1 FROM "job_events" "e" WHERE "e"."job_id" = "r"."id")) THEN 'agent-' || "r"."id" END,
  "r"."created_at", "r"."created_at", "r"."finished_at",
  CASE WHEN "r"."parent_id" IS NULL AND "r"."state" NOT IN ('running', 'cancelling')
    AND NOT EXISTS (SELECT 1 FROM "agent_runs" "t" WHERE "t"."thread_id" = "r"."thread_id" AND "t"."team_id" = "r"."team_id" AND "t"."parent_id" IS NULL AND "t"."state" IN ('running', 'cancelling'))
    THEN (SELECT max("t"."expires_at") FROM "agent_runs" "t" WHERE "t"."thread_id" = "r"."thread_id" AND "t"."team_id" = "r"."team_id" AND "t"."parent_id" IS NULL) END
FROM "agent_runs" "r"
ORDER BY ("r"."parent_id" IS NOT NULL);
--> statement-breakpoint
ALTER TABLE "agent_runs" DROP CONSTRAINT "agent_runs_team_id_teams_id_fk";
--> statement-breakpoint
DROP INDEX "agent_runs_team_created_idx";--> statement-breakpoint
DROP INDEX "agent_runs_expires_idx";--> statement-breakpoint
ALTER TABLE "agent_runs" ADD CONSTRAINT "agent_runs_id_jobs_id_fk" FOREIGN KEY ("id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_runs" DROP COLUMN "team_id";--> statement-breakpoint
ALTER TABLE "agent_runs" DROP COLUMN "status";--> statement-breakpoint
ALTER TABLE "agent_runs" DROP COLUMN "state";--> statement-breakpoint
ALTER TABLE "agent_runs" DROP COLUMN "options";--> statement-breakpoint
ALTER TABLE "agent_runs" DROP COLUMN "error";--> statement-breakpoint
ALTER TABLE "agent_runs" DROP COLUMN "credits_used";--> statement-breakpoint
ALTER TABLE "agent_runs" DROP COLUMN "created_at";--> statement-breakpoint
ALTER TABLE "agent_runs" DROP COLUMN "finished_at";--> statement-breakpoint
ALTER TABLE "agent_runs" DROP COLUMN "expires_at";