CREATE TABLE "monitor_check_pages" (
	"check_id" uuid NOT NULL,
	"target_id" text NOT NULL,
	"url_key" text NOT NULL,
	"url" text NOT NULL,
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"run_id" uuid,
	"seq" bigserial NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"status_code" integer,
	"error" text,
	"previous_scrape_id" uuid,
	"current_scrape_id" uuid,
	"metadata" jsonb,
	"diff" jsonb,
	"snapshot" jsonb,
	"credits" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "monitor_check_pages_check_id_target_id_url_key_pk" PRIMARY KEY("check_id","target_id","url_key")
);
--> statement-breakpoint
CREATE TABLE "monitor_checks" (
	"id" uuid PRIMARY KEY NOT NULL,
	"monitor_id" uuid NOT NULL,
	"team_id" uuid NOT NULL,
	"run_id" uuid,
	"status" text NOT NULL,
	"trigger" text NOT NULL,
	"scheduled_for" timestamp with time zone,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"estimated_credits" integer,
	"actual_credits" integer,
	"billing_status" text DEFAULT 'not_applicable' NOT NULL,
	"summary" jsonb,
	"target_results" jsonb,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "monitor_runs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"status" text DEFAULT 'scraping' NOT NULL,
	"checks" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "monitors" (
	"id" uuid PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"name" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"schedule" jsonb NOT NULL,
	"targets" jsonb NOT NULL,
	"webhook" jsonb,
	"notification" jsonb,
	"retention_days" integer DEFAULT 30 NOT NULL,
	"goal" text,
	"judge_enabled" boolean DEFAULT false NOT NULL,
	"zero_data_retention" boolean DEFAULT false NOT NULL,
	"estimated_credits_per_month" integer,
	"shard_key" smallint NOT NULL,
	"next_run_at" timestamp with time zone,
	"last_run_at" timestamp with time zone,
	"running_check_id" uuid,
	"last_check_summary" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "monitor_check_pages" ADD CONSTRAINT "monitor_check_pages_check_id_monitor_checks_id_fk" FOREIGN KEY ("check_id") REFERENCES "public"."monitor_checks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "monitor_checks" ADD CONSTRAINT "monitor_checks_monitor_id_monitors_id_fk" FOREIGN KEY ("monitor_id") REFERENCES "public"."monitors"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "monitors" ADD CONSTRAINT "monitors_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "monitor_check_pages_claim_idx" ON "monitor_check_pages" USING btree ("run_id","seq") WHERE status IN ('queued', 'leased');--> statement-breakpoint
CREATE INDEX "monitor_check_pages_order_idx" ON "monitor_check_pages" USING btree ("check_id","seq");--> statement-breakpoint
CREATE INDEX "monitor_checks_monitor_idx" ON "monitor_checks" USING btree ("monitor_id","created_at");--> statement-breakpoint
CREATE INDEX "monitor_checks_run_idx" ON "monitor_checks" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "monitors_team_idx" ON "monitors" USING btree ("team_id","created_at");--> statement-breakpoint
CREATE INDEX "monitors_due_idx" ON "monitors" USING btree ("next_run_at") WHERE status = 'active';
