-- Every monitor run moves into jobs (kind monitor_run, no team: a run holds checks of several teams) before
-- monitor_runs loses the common columns. scraping -> running (its workflow id, so the one stranded-job sweeper
-- judges it); an ended run keeps its word and expires a day after its end, as pruneMonitorChecks deleted it.
INSERT INTO "jobs" ("id", "team_id", "kind", "status", "workflow_id", "created_at", "started_at", "finished_at", "expires_at")
SELECT "r"."id", NULL, 'monitor_run',
  CASE "r"."status" WHEN 'scraping' THEN 'running' ELSE "r"."status" END,
  'monitor-run-' || "r"."id", "r"."created_at", "r"."created_at",
  CASE WHEN "r"."status" = 'scraping' THEN NULL ELSE coalesce("r"."finished_at", "r"."created_at") END,
  CASE WHEN "r"."status" = 'scraping' THEN NULL ELSE coalesce("r"."finished_at", "r"."created_at") + interval '1 day' END
FROM "monitor_runs" "r";
--> statement-breakpoint
ALTER TABLE "monitor_runs" ADD CONSTRAINT "monitor_runs_id_jobs_id_fk" FOREIGN KEY ("id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "monitor_runs" DROP COLUMN "status";--> statement-breakpoint
ALTER TABLE "monitor_runs" DROP COLUMN "created_at";--> statement-breakpoint
ALTER TABLE "monitor_runs" DROP COLUMN "finished_at";
