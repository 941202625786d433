CREATE TABLE "jobs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"team_id" uuid,
	"kind" text NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"outcome" text,
	"parent_id" uuid,
	"options" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"error" jsonb,
	"credits_used" integer DEFAULT 0 NOT NULL,
	"idempotency_key" text,
	"zero_data_retention" boolean DEFAULT false NOT NULL,
	"workflow_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	CONSTRAINT "jobs_status_check" CHECK ("jobs"."status" IN ('queued', 'running', 'cancelling', 'completed', 'failed', 'cancelled')),
	CONSTRAINT "jobs_team_check" CHECK ("jobs"."team_id" IS NOT NULL OR "jobs"."kind" = 'monitor_run')
);
--> statement-breakpoint
-- Existing rows move into jobs before their tables lose the common columns (an upgraded deployment keeps every job).
-- A row still pending was its request's: its workflow runs (or the stranded-job sweeper finds it gone and fails it).
INSERT INTO "jobs" ("id", "team_id", "kind", "status", "options", "error", "workflow_id", "created_at", "started_at", "finished_at")
SELECT "id", "team_id", 'map', CASE "status" WHEN 'pending' THEN 'running' ELSE "status" END, "options", "error", 'map-' || "id", "created_at", "created_at", "completed_at" FROM "map_jobs";
--> statement-breakpoint
INSERT INTO "jobs" ("id", "team_id", "kind", "status", "options", "error", "credits_used", "zero_data_retention", "workflow_id", "created_at", "started_at", "finished_at", "expires_at")
SELECT "id", "team_id", 'parse', CASE "status" WHEN 'pending' THEN 'running' ELSE "status" END, "options", "error", "credits_used",
  coalesce("options" ->> 'zeroDataRetention' = 'true', false), 'parse-' || "id", "created_at", "created_at", "completed_at",
  CASE WHEN "options" ->> 'zeroDataRetention' = 'true' THEN "created_at" + make_interval(secs => (coalesce(("options" ->> 'timeout')::int, 300000) + 120000) / 1000.0) END
FROM "parse_jobs";
--> statement-breakpoint
INSERT INTO "jobs" ("id", "team_id", "kind", "status", "workflow_id", "created_at", "started_at", "finished_at")
SELECT "id", "team_id", 'crawl_params', CASE "status" WHEN 'pending' THEN 'running' ELSE "status" END, 'crawl-params-' || "id", "created_at", "created_at", "completed_at" FROM "crawl_param_previews";
--> statement-breakpoint
ALTER TABLE "map_jobs" DROP CONSTRAINT "map_jobs_team_id_teams_id_fk";
--> statement-breakpoint
ALTER TABLE "parse_jobs" DROP CONSTRAINT "parse_jobs_team_id_teams_id_fk";
--> statement-breakpoint
ALTER TABLE "crawl_param_previews" DROP CONSTRAINT "crawl_param_previews_team_id_teams_id_fk";
--> statement-breakpoint
DROP INDEX "parse_jobs_team_created_idx";--> statement-breakpoint
DROP INDEX "parse_jobs_zdr_created_idx";--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_parent_id_jobs_id_fk" FOREIGN KEY ("parent_id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "jobs_team_kind_created_idx" ON "jobs" USING btree ("team_id","kind","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_idempotency_idx" ON "jobs" USING btree ("team_id","kind","idempotency_key") WHERE "jobs"."idempotency_key" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "jobs_live_idx" ON "jobs" USING btree ("created_at") WHERE "jobs"."status" IN ('queued', 'running', 'cancelling') AND "jobs"."workflow_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "jobs_expires_idx" ON "jobs" USING btree ("expires_at") WHERE "jobs"."expires_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "jobs_parent_idx" ON "jobs" USING btree ("parent_id") WHERE "jobs"."parent_id" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "map_jobs" ADD CONSTRAINT "map_jobs_id_jobs_id_fk" FOREIGN KEY ("id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "parse_jobs" ADD CONSTRAINT "parse_jobs_id_jobs_id_fk" FOREIGN KEY ("id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "crawl_param_previews" ADD CONSTRAINT "crawl_param_previews_id_jobs_id_fk" FOREIGN KEY ("id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "map_jobs" DROP COLUMN "team_id";--> statement-breakpoint
ALTER TABLE "map_jobs" DROP COLUMN "options";--> statement-breakpoint
ALTER TABLE "map_jobs" DROP COLUMN "status";--> statement-breakpoint
ALTER TABLE "map_jobs" DROP COLUMN "error";--> statement-breakpoint
ALTER TABLE "map_jobs" DROP COLUMN "created_at";--> statement-breakpoint
ALTER TABLE "map_jobs" DROP COLUMN "completed_at";--> statement-breakpoint
ALTER TABLE "parse_jobs" DROP COLUMN "team_id";--> statement-breakpoint
ALTER TABLE "parse_jobs" DROP COLUMN "options";--> statement-breakpoint
ALTER TABLE "parse_jobs" DROP COLUMN "status";--> statement-breakpoint
ALTER TABLE "parse_jobs" DROP COLUMN "error";--> statement-breakpoint
ALTER TABLE "parse_jobs" DROP COLUMN "credits_used";--> statement-breakpoint
ALTER TABLE "parse_jobs" DROP COLUMN "created_at";--> statement-breakpoint
ALTER TABLE "parse_jobs" DROP COLUMN "completed_at";--> statement-breakpoint
ALTER TABLE "crawl_param_previews" DROP COLUMN "team_id";--> statement-breakpoint
ALTER TABLE "crawl_param_previews" DROP COLUMN "status";--> statement-breakpoint
ALTER TABLE "crawl_param_previews" DROP COLUMN "created_at";--> statement-breakpoint
ALTER TABLE "crawl_param_previews" DROP COLUMN "completed_at";