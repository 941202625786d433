CREATE TABLE "page_contents" (
	"team_id" uuid NOT NULL,
	"hash" text NOT NULL,
	"markdown" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "page_contents_team_id_hash_pk" PRIMARY KEY("team_id","hash")
);
--> statement-breakpoint
CREATE TABLE "page_versions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"url_key" text NOT NULL,
	"tag" text DEFAULT '' NOT NULL,
	"site" text NOT NULL,
	"url" text,
	"status" text NOT NULL,
	"status_code" integer,
	"markdown_hash" text,
	"content_hash" text,
	"body_hash" text,
	"etag" text,
	"last_modified" text,
	"json" jsonb,
	"json_key" text,
	"source_key" text NOT NULL,
	"last_source" text NOT NULL,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"prev_seen_at" timestamp with time zone,
	"check_status" text DEFAULT 'ok' NOT NULL,
	"last_error" text,
	"failed_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "crawl_urls" ADD COLUMN "hidden" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "page_contents" ADD CONSTRAINT "page_contents_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "page_versions" ADD CONSTRAINT "page_versions_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "page_versions" ADD CONSTRAINT "page_versions_content_fk" FOREIGN KEY ("team_id","content_hash") REFERENCES "public"."page_contents"("team_id","hash") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "page_versions_source_idx" ON "page_versions" USING btree ("team_id","source_key");--> statement-breakpoint
CREATE INDEX "page_versions_page_idx" ON "page_versions" USING btree ("team_id","tag","url_key","id");--> statement-breakpoint
CREATE INDEX "page_versions_site_idx" ON "page_versions" USING btree ("team_id","tag","site");