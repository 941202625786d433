-- Every extract's jobs row (made by 0033 for its fetch phase) becomes the extract's own before extract_jobs loses the
-- common columns: its status (processing -> running, whatever its fetch phase; the other ends stay), the request's
-- options with the page options its frontier statements read (scrapeOptions), the text error as a FailureRecord, the
-- final credits, its dates and expiry (none while it runs), and its workflow id, so the one stranded-job sweeper judges
-- it. An extract without such a row (none is expected: both were written in one transaction) gets one.
UPDATE "jobs" "j" SET
  "status" = CASE WHEN "e"."status" = 'processing' THEN 'running' ELSE "e"."status" END,
  "options" = "e"."options" || jsonb_build_object('scrapeOptions', coalesce("j"."options" -> 'scrapeOptions', "e"."options" -> 'pageOptions')),
  "error" = CASE WHEN "e"."error" IS NULL THEN NULL ELSE jsonb_build_object('kind', 'INTERNAL', 'message', "e"."error") END,
  "credits_used" = "e"."credits_used",
  "workflow_id" = 'extract-' || "e"."id",
  "created_at" = "e"."created_at",
  "started_at" = "e"."created_at",
  "finished_at" = CASE WHEN "e"."status" = 'processing' THEN NULL ELSE coalesce("e"."completed_at", "j"."finished_at", now()) END,
  "expires_at" = CASE WHEN "e"."status" = 'processing' THEN NULL ELSE "e"."expires_at" END
FROM "extract_jobs" "e" WHERE "j"."id" = "e"."id";
--> statement-breakpoint
INSERT INTO "jobs" ("id", "team_id", "kind", "status", "options", "error", "credits_used", "workflow_id", "created_at", "started_at", "finished_at", "expires_at")
SELECT "e"."id", "e"."team_id", 'extract', CASE WHEN "e"."status" = 'processing' THEN 'running' ELSE "e"."status" END,
  "e"."options" || jsonb_build_object('scrapeOptions', "e"."options" -> 'pageOptions'),
  CASE WHEN "e"."error" IS NULL THEN NULL ELSE jsonb_build_object('kind', 'INTERNAL', 'message', "e"."error") END,
  "e"."credits_used", 'extract-' || "e"."id", "e"."created_at", "e"."created_at",
  CASE WHEN "e"."status" = 'processing' THEN NULL ELSE coalesce("e"."completed_at", now()) END,
  CASE WHEN "e"."status" = 'processing' THEN NULL ELSE "e"."expires_at" END
FROM "extract_jobs" "e" WHERE NOT EXISTS (SELECT 1 FROM "jobs" "j" WHERE "j"."id" = "e"."id");
--> statement-breakpoint
ALTER TABLE "extract_jobs" DROP CONSTRAINT "extract_jobs_team_id_teams_id_fk";
--> statement-breakpoint
DROP INDEX "extract_jobs_team_created_idx";--> statement-breakpoint
DROP INDEX "extract_jobs_expires_idx";--> statement-breakpoint
ALTER TABLE "extract_jobs" ADD CONSTRAINT "extract_jobs_id_jobs_id_fk" FOREIGN KEY ("id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "extract_jobs" DROP COLUMN "team_id";--> statement-breakpoint
ALTER TABLE "extract_jobs" DROP COLUMN "options";--> statement-breakpoint
ALTER TABLE "extract_jobs" DROP COLUMN "status";--> statement-breakpoint
ALTER TABLE "extract_jobs" DROP COLUMN "error";--> statement-breakpoint
ALTER TABLE "extract_jobs" DROP COLUMN "credits_used";--> statement-breakpoint
ALTER TABLE "extract_jobs" DROP COLUMN "created_at";--> statement-breakpoint
ALTER TABLE "extract_jobs" DROP COLUMN "completed_at";--> statement-breakpoint
ALTER TABLE "extract_jobs" DROP COLUMN "expires_at";