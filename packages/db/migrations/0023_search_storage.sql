-- search_pages: the matching vector and the body are stored out of line without compression (STORAGE EXTERNAL)
-- instead of being offered to pglz first. A tsvector does not compress (pglz gives up after reading it whole:
-- measured on the varied crawl site's and 170 real pages' vectors, stored size = raw size), and the body's
-- compression (~2× on text) cost ~0.4 ms of Postgres CPU per 16,000-character page, together ~0.7 ms of the
-- ~3.5 ms a page's indexing costs (bench/README.md "search", session 8). The body costs more disk instead
-- (its raw size). Rows written before keep their format.
ALTER TABLE "search_pages" ALTER COLUMN "tsv" SET STORAGE EXTERNAL;--> statement-breakpoint
ALTER TABLE "search_pages" ALTER COLUMN "body" SET STORAGE EXTERNAL;
