-- Progress of the own search index's backfill (packages/db/src/search-backfill.ts): one row per source table, its keyset cursor moved by the transaction that indexes each batch.
CREATE TABLE "search_backfill" (
	"source" text PRIMARY KEY NOT NULL,
	"cutoff" timestamp with time zone DEFAULT now() NOT NULL,
	"cursor" jsonb,
	"rows" bigint DEFAULT 0 NOT NULL,
	"finished_at" timestamp with time zone
);
