CREATE TABLE "crawl_llm_pages" (
	"job_id" uuid NOT NULL,
	"url_key" text NOT NULL,
	"seq" bigserial NOT NULL,
	"document" jsonb NOT NULL,
	"credits" integer DEFAULT 1 NOT NULL,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"failing_since" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "crawl_llm_pages_job_id_url_key_pk" PRIMARY KEY("job_id","url_key")
);
--> statement-breakpoint
CREATE TABLE "llm_token_windows" (
	"window_start" timestamp with time zone PRIMARY KEY NOT NULL,
	"tokens" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "crawl_llm_pages" ADD CONSTRAINT "crawl_llm_pages_job_id_crawl_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."crawl_jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "crawl_llm_pages_job_seq_idx" ON "crawl_llm_pages" USING btree ("job_id","seq");