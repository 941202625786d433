-- The own search index (packages/db/src/search-index.ts writes it, search.ts reads it): one row per team and page,
-- tsv (everything, what matches) and tsv_rank (title, headings, description, the body's start: what ranks)
-- computed by Postgres from the page's text with its language's configuration, both GIN-indexed.
CREATE TABLE "search_pages" (
	"team_id" uuid NOT NULL,
	"url_key" text NOT NULL,
	"url" text NOT NULL,
	"host" text NOT NULL,
	"title" text DEFAULT '' NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"headings" text DEFAULT '' NOT NULL,
	"body" text DEFAULT '' NOT NULL,
	"language" text,
	"config" "regconfig" DEFAULT 'simple'::regconfig NOT NULL,
	"content_type" text,
	"image_url" text,
	"published_at" timestamp with time zone,
	"stored_at" timestamp with time zone DEFAULT now() NOT NULL,
	"tsv" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector(config, title), 'A') || setweight(to_tsvector(config, headings), 'B') || setweight(to_tsvector(config, description), 'C') || setweight(to_tsvector(config, body), 'D')) STORED NOT NULL,
	"tsv_rank" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector(config, title), 'A') || setweight(to_tsvector(config, headings), 'B') || setweight(to_tsvector(config, description), 'C') || setweight(to_tsvector(config, left(body, 1000)), 'D')) STORED NOT NULL,
	CONSTRAINT "search_pages_team_id_url_key_pk" PRIMARY KEY("team_id","url_key")
);
--> statement-breakpoint
ALTER TABLE "search_pages" ADD CONSTRAINT "search_pages_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- tsv_rank is read for every candidate a query ranks: kept in the row (compressed if need be) rather than TOASTed.
ALTER TABLE "search_pages" ALTER COLUMN "tsv_rank" SET STORAGE MAIN;--> statement-breakpoint
CREATE INDEX "search_pages_tsv_idx" ON "search_pages" USING gin ("tsv");--> statement-breakpoint
CREATE INDEX "search_pages_tsv_rank_idx" ON "search_pages" USING gin ("tsv_rank");--> statement-breakpoint
CREATE INDEX "search_pages_team_host_idx" ON "search_pages" USING btree ("team_id","host");