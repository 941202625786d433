ALTER TABLE "scrape_jobs" ADD COLUMN "dispatch" text;--> statement-breakpoint
ALTER TABLE "scrape_jobs" ADD COLUMN "lease_owner" text;--> statement-breakpoint
ALTER TABLE "scrape_jobs" ADD COLUMN "lease_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "scrape_jobs" ADD COLUMN "attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "scrape_jobs_direct_pending_idx" ON "scrape_jobs" USING btree ("created_at") WHERE status = 'pending' AND dispatch = 'direct';