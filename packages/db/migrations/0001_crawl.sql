CREATE TABLE "crawl_documents" (
	"job_id" uuid NOT NULL,
	"url_key" text NOT NULL,
	"seq" bigserial NOT NULL,
	"document" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "crawl_documents_job_id_url_key_pk" PRIMARY KEY("job_id","url_key")
);
--> statement-breakpoint
CREATE TABLE "crawl_jobs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"url" text,
	"options" jsonb NOT NULL,
	"status" text DEFAULT 'scraping' NOT NULL,
	"page_limit" integer NOT NULL,
	"enqueued" integer DEFAULT 0 NOT NULL,
	"completed" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"credits_used" integer DEFAULT 0 NOT NULL,
	"error" text,
	"idempotency_key" text,
	"zero_data_retention" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone,
	"expires_at" timestamp with time zone DEFAULT now() + interval '24 hours' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "crawl_robots" (
	"job_id" uuid NOT NULL,
	"origin" text NOT NULL,
	"body" text,
	"fetched_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "crawl_robots_job_id_origin_pk" PRIMARY KEY("job_id","origin")
);
--> statement-breakpoint
CREATE TABLE "crawl_urls" (
	"job_id" uuid NOT NULL,
	"url_key" text NOT NULL,
	"url" text NOT NULL,
	"depth" integer DEFAULT 0 NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"page_id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"error" text,
	"external" boolean DEFAULT false NOT NULL,
	"discovery_only" boolean DEFAULT false NOT NULL,
	"seq" bigserial NOT NULL,
	"done_at" timestamp with time zone,
	CONSTRAINT "crawl_urls_job_id_url_key_pk" PRIMARY KEY("job_id","url_key")
);
--> statement-breakpoint
CREATE TABLE "webhook_outbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"job_id" uuid NOT NULL,
	"url" text NOT NULL,
	"headers" jsonb,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "map_jobs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"options" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"links" jsonb,
	"error" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "crawl_documents" ADD CONSTRAINT "crawl_documents_job_id_crawl_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."crawl_jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "crawl_jobs" ADD CONSTRAINT "crawl_jobs_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "crawl_robots" ADD CONSTRAINT "crawl_robots_job_id_crawl_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."crawl_jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "crawl_urls" ADD CONSTRAINT "crawl_urls_job_id_crawl_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."crawl_jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "map_jobs" ADD CONSTRAINT "map_jobs_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "crawl_documents_job_seq_idx" ON "crawl_documents" USING btree ("job_id","seq");--> statement-breakpoint
CREATE INDEX "crawl_jobs_team_status_idx" ON "crawl_jobs" USING btree ("team_id","status");--> statement-breakpoint
CREATE INDEX "crawl_jobs_idem_idx" ON "crawl_jobs" USING btree ("team_id","idempotency_key");--> statement-breakpoint
CREATE INDEX "crawl_urls_claim_idx" ON "crawl_urls" USING btree ("job_id","status","seq");--> statement-breakpoint
CREATE INDEX "webhook_outbox_due_idx" ON "webhook_outbox" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "webhook_outbox_job_idx" ON "webhook_outbox" USING btree ("job_id","status","id");