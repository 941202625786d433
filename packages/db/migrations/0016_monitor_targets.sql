CREATE TABLE "monitor_check_targets" (
	"check_id" uuid NOT NULL,
	"target_id" text NOT NULL,
	"run_id" uuid NOT NULL,
	"type" text NOT NULL,
	"job_id" uuid,
	"status" text DEFAULT 'pending' NOT NULL,
	"result" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "monitor_check_targets_check_id_target_id_pk" PRIMARY KEY("check_id","target_id")
);
--> statement-breakpoint
CREATE TABLE "monitor_emails" (
	"check_id" uuid PRIMARY KEY NOT NULL,
	"monitor_id" uuid NOT NULL,
	"team_id" uuid NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	"sent_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "monitor_check_pages_claim_idx";--> statement-breakpoint
ALTER TABLE "monitor_check_pages" ADD COLUMN "kind" text DEFAULT 'page' NOT NULL;--> statement-breakpoint
ALTER TABLE "monitor_check_pages" ADD COLUMN "judgment" jsonb;--> statement-breakpoint
ALTER TABLE "monitor_check_pages" ADD COLUMN "pending" jsonb;--> statement-breakpoint
ALTER TABLE "monitor_check_pages" ADD COLUMN "failing_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "monitor_check_pages" ADD COLUMN "prepaid_credits" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "monitor_checks" ADD COLUMN "pending_targets" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "monitor_checks" ADD COLUMN "has_targets" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "monitor_checks" ADD COLUMN "target_credits" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "monitor_checks" ADD COLUMN "notification_status" jsonb;--> statement-breakpoint
ALTER TABLE "monitor_runs" ADD COLUMN "targets" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "monitor_runs" ADD COLUMN "claim_id" uuid;--> statement-breakpoint
ALTER TABLE "monitors" ADD COLUMN "crawl_specs" jsonb;--> statement-breakpoint
ALTER TABLE "monitor_check_targets" ADD CONSTRAINT "monitor_check_targets_check_id_monitor_checks_id_fk" FOREIGN KEY ("check_id") REFERENCES "public"."monitor_checks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "monitor_emails" ADD CONSTRAINT "monitor_emails_check_id_monitor_checks_id_fk" FOREIGN KEY ("check_id") REFERENCES "public"."monitor_checks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "monitor_check_targets_run_idx" ON "monitor_check_targets" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "monitor_emails_due_idx" ON "monitor_emails" USING btree ("next_attempt_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "monitor_runs_claim_idx" ON "monitor_runs" USING btree ("claim_id");--> statement-breakpoint
CREATE INDEX "monitor_check_pages_claim_idx" ON "monitor_check_pages" USING btree ("run_id","seq") WHERE status IN ('queued', 'leased', 'llm');