CREATE INDEX "crawl_jobs_expires_idx" ON "crawl_jobs" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "extract_jobs_expires_idx" ON "extract_jobs" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "agent_runs_expires_idx" ON "agent_runs" USING btree ("expires_at") WHERE "agent_runs"."parent_id" IS NULL;