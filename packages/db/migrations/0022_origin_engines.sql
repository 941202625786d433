CREATE TABLE "crawl_origin_engines" (
	"job_id" uuid NOT NULL,
	"origin" text NOT NULL,
	"rendered" integer DEFAULT 0 NOT NULL,
	"static" boolean DEFAULT false NOT NULL,
	CONSTRAINT "crawl_origin_engines_job_id_origin_pk" PRIMARY KEY("job_id","origin")
);
--> statement-breakpoint
ALTER TABLE "crawl_origin_engines" ADD CONSTRAINT "crawl_origin_engines_job_id_crawl_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."crawl_jobs"("id") ON DELETE cascade ON UPDATE no action;