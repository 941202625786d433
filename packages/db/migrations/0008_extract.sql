CREATE TABLE "crawl_param_previews" (
	"id" uuid PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"url" text NOT NULL,
	"prompt" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"result" jsonb,
	"warning" text,
	"tokens_used" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "extract_jobs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"options" jsonb NOT NULL,
	"status" text DEFAULT 'processing' NOT NULL,
	"data" jsonb,
	"sources" jsonb,
	"warning" text,
	"error" text,
	"tokens_used" integer DEFAULT 0 NOT NULL,
	"credits_used" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone,
	"expires_at" timestamp with time zone DEFAULT now() + interval '24 hours' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "extract_pages" (
	"job_id" uuid NOT NULL,
	"doc_seq" bigint NOT NULL,
	"url" text NOT NULL,
	"status" text NOT NULL,
	"data" jsonb,
	"named" boolean DEFAULT false NOT NULL,
	"filled" integer DEFAULT 0 NOT NULL,
	"reason" text,
	"prompt_tokens" integer DEFAULT 0 NOT NULL,
	"completion_tokens" integer DEFAULT 0 NOT NULL,
	"credits" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "extract_pages_job_id_doc_seq_pk" PRIMARY KEY("job_id","doc_seq")
);
--> statement-breakpoint
ALTER TABLE "crawl_param_previews" ADD CONSTRAINT "crawl_param_previews_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "extract_jobs" ADD CONSTRAINT "extract_jobs_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "extract_pages" ADD CONSTRAINT "extract_pages_job_id_extract_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."extract_jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "extract_jobs_team_created_idx" ON "extract_jobs" USING btree ("team_id","created_at");