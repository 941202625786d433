ALTER TABLE "crawl_jobs" ADD COLUMN "delivered_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "scrape_jobs_keep_nothing_idx" ON "scrape_jobs" USING btree ("created_at") WHERE (options ->> 'zeroDataRetention' = 'true' OR options ->> 'lockdown' = 'true');--> statement-breakpoint
CREATE INDEX "crawl_jobs_zdr_completed_idx" ON "crawl_jobs" USING btree ("completed_at") WHERE "crawl_jobs"."zero_data_retention";--> statement-breakpoint
CREATE INDEX "parse_jobs_zdr_created_idx" ON "parse_jobs" USING btree ("created_at") WHERE options ->> 'zeroDataRetention' = 'true';