CREATE TABLE "crawl_fingerprints" (
	"job_id" uuid NOT NULL,
	"fingerprint" text NOT NULL,
	"url_key" text NOT NULL,
	CONSTRAINT "crawl_fingerprints_job_id_fingerprint_pk" PRIMARY KEY("job_id","fingerprint")
);
--> statement-breakpoint
DROP INDEX "crawl_urls_problem_idx";--> statement-breakpoint
ALTER TABLE "crawl_urls" ADD COLUMN "duplicate_of" text;--> statement-breakpoint
ALTER TABLE "crawl_fingerprints" ADD CONSTRAINT "crawl_fingerprints_job_id_crawl_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."crawl_jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "crawl_urls_problem_idx" ON "crawl_urls" USING btree ("job_id","seq") WHERE "crawl_urls"."status" IN ('failed', 'robots', 'duplicate');