-- The statements that store a crawl's pages find rows by key whatever the planner's statistics say
-- (a table grown since its last analyze made them read a job's or a team's rows per page group):
-- crawl_urls_claim_idx holds only URLs still to fetch, so a group's URLs are found by the primary key
-- (failed and robots-blocked URLs get their own small index); search_pages_team_host_idx ends with
-- url_key, so a probe by key is direct in either index; and search_pages' vectors are no longer
-- generated columns: the one upsert writing a row computes them, only for text that changed
-- (packages/db/src/search-index.ts).
DROP INDEX "crawl_urls_claim_idx";--> statement-breakpoint
DROP INDEX "search_pages_team_host_idx";--> statement-breakpoint
ALTER TABLE "search_pages" ALTER COLUMN "tsv" DROP EXPRESSION;--> statement-breakpoint
ALTER TABLE "search_pages" ALTER COLUMN "tsv_rank" DROP EXPRESSION;--> statement-breakpoint
CREATE INDEX "crawl_urls_problem_idx" ON "crawl_urls" USING btree ("job_id","seq") WHERE "crawl_urls"."status" IN ('failed', 'robots');--> statement-breakpoint
CREATE INDEX "crawl_urls_claim_idx" ON "crawl_urls" USING btree ("job_id","status","seq") WHERE "crawl_urls"."status" IN ('queued', 'leased', 'browser', 'rendering');--> statement-breakpoint
CREATE INDEX "search_pages_team_host_idx" ON "search_pages" USING btree ("team_id","host","url_key");