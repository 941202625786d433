-- page_cache.body: compressed by the worker (brotli quality 1, `body_encoding` = 'br') and stored as it comes.
-- pglz on real pages (../shared/bench/main-content, 184 kB of HTML on average) cost Postgres ~2.4 ms of CPU per
-- page written and shrank bodies 3.3x; brotli q1 costs the writer ~0.7 ms (off the main thread) and shrinks them
-- 4.7x. Rows written before keep a null encoding (raw bytes, compressed by pglz as before).
ALTER TABLE "page_cache" ADD COLUMN "body_encoding" text;--> statement-breakpoint
ALTER TABLE "page_cache" ALTER COLUMN "body" SET STORAGE EXTERNAL;
