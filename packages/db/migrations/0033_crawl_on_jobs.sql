-- Every crawl, batch scrape and extract frontier row moves into jobs before crawl_jobs loses the common columns.
-- Status words: scraping -> running; a job the API cancelled whose workflow had not written its end yet (cancelled,
-- no completed_at) -> cancelling (its workflow ends it as before); the other ends stay. The text error becomes a
-- FailureRecord. A live crawl or batch is judged by the stranded-job sweeper by its workflow id (an extract's frontier
-- row has none: its extract job is still swept as before). Expiry is data: an ended crawl or batch is kept 24 hours
-- from its end at least (rows ended before finishJob moved expires_at still carried the one of their start), held
-- (NULL) while a monitor check has not collected it; an extract's frontier row goes with its extract (retention.ts).
-- The old index let one idempotency key name two batches of a team; the newest keeps it (the one the API found first).
INSERT INTO "jobs" ("id", "team_id", "kind", "status", "options", "error", "credits_used", "idempotency_key", "zero_data_retention", "workflow_id", "created_at", "started_at", "finished_at", "expires_at")
SELECT "c"."id", "c"."team_id", "c"."kind",
  CASE WHEN "c"."status" = 'scraping' THEN 'running' WHEN "c"."status" = 'cancelled' AND "c"."completed_at" IS NULL THEN 'cancelling' ELSE "c"."status" END,
  "c"."options",
  CASE WHEN "c"."error" IS NULL THEN NULL ELSE jsonb_build_object('kind', 'INTERNAL', 'message', "c"."error") END,
  "c"."credits_used",
  CASE WHEN "c"."idempotency_key" IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM "crawl_jobs" "o" WHERE "o"."team_id" = "c"."team_id" AND "o"."kind" = "c"."kind" AND "o"."idempotency_key" = "c"."idempotency_key"
      AND ("o"."created_at", "o"."id") > ("c"."created_at", "c"."id")) THEN "c"."idempotency_key" END,
  "c"."zero_data_retention",
  CASE WHEN "c"."kind" IN ('crawl', 'batch') THEN "c"."kind" || '-' || "c"."id" END,
  "c"."created_at", "c"."created_at", "c"."completed_at",
  CASE WHEN "c"."kind" = 'extract' OR "c"."status" = 'scraping' OR "c"."completed_at" IS NULL THEN NULL
    WHEN EXISTS (SELECT 1 FROM "monitor_check_targets" "t" WHERE "t"."job_id" = "c"."id" AND "t"."status" = 'pending') THEN NULL
    ELSE greatest("c"."expires_at", "c"."completed_at" + interval '24 hours') END
FROM "crawl_jobs" "c";
--> statement-breakpoint
ALTER TABLE "crawl_jobs" DROP CONSTRAINT "crawl_jobs_team_id_teams_id_fk";
--> statement-breakpoint
DROP INDEX "crawl_jobs_team_status_idx";--> statement-breakpoint
DROP INDEX "crawl_jobs_idem_idx";--> statement-breakpoint
DROP INDEX "crawl_jobs_zdr_completed_idx";--> statement-breakpoint
DROP INDEX "crawl_jobs_expires_idx";--> statement-breakpoint
ALTER TABLE "crawl_jobs" ADD CONSTRAINT "crawl_jobs_id_jobs_id_fk" FOREIGN KEY ("id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "crawl_jobs" DROP COLUMN "team_id";--> statement-breakpoint
ALTER TABLE "crawl_jobs" DROP COLUMN "kind";--> statement-breakpoint
ALTER TABLE "crawl_jobs" DROP COLUMN "options";--> statement-breakpoint
ALTER TABLE "crawl_jobs" DROP COLUMN "status";--> statement-breakpoint
ALTER TABLE "crawl_jobs" DROP COLUMN "credits_used";--> statement-breakpoint
ALTER TABLE "crawl_jobs" DROP COLUMN "error";--> statement-breakpoint
ALTER TABLE "crawl_jobs" DROP COLUMN "idempotency_key";--> statement-breakpoint
ALTER TABLE "crawl_jobs" DROP COLUMN "zero_data_retention";--> statement-breakpoint
ALTER TABLE "crawl_jobs" DROP COLUMN "created_at";--> statement-breakpoint
ALTER TABLE "crawl_jobs" DROP COLUMN "completed_at";--> statement-breakpoint
ALTER TABLE "crawl_jobs" DROP COLUMN "expires_at";