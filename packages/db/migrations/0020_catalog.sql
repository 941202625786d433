CREATE TABLE "catalog_call_results" (
	"request_id" uuid NOT NULL,
	"idx" smallint NOT NULL,
	"result" jsonb NOT NULL,
	"credits" integer DEFAULT 0 NOT NULL,
	"charged_by" text DEFAULT 'catalog' NOT NULL,
	CONSTRAINT "catalog_call_results_request_id_idx_pk" PRIMARY KEY("request_id","idx")
);
--> statement-breakpoint
CREATE TABLE "catalog_entries" (
	"provider" text NOT NULL,
	"capability" text NOT NULL,
	"entry" json NOT NULL,
	"domains" text[] DEFAULT '{}'::text[] NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "catalog_entries_provider_capability_pk" PRIMARY KEY("provider","capability")
);
--> statement-breakpoint
CREATE TABLE "catalog_requests" (
	"id" uuid PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"request_id" text NOT NULL,
	"fingerprint" text NOT NULL,
	"calls" jsonb NOT NULL,
	"timeout_ms" integer NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"response" jsonb,
	"credits_used" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "catalog_terms_acceptances" (
	"team_id" uuid NOT NULL,
	"provider" text NOT NULL,
	"version" text NOT NULL,
	"accepted_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "catalog_terms_acceptances_team_id_provider_pk" PRIMARY KEY("team_id","provider")
);
--> statement-breakpoint
ALTER TABLE "catalog_call_results" ADD CONSTRAINT "catalog_call_results_request_id_catalog_requests_id_fk" FOREIGN KEY ("request_id") REFERENCES "public"."catalog_requests"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_requests" ADD CONSTRAINT "catalog_requests_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "catalog_terms_acceptances" ADD CONSTRAINT "catalog_terms_acceptances_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "catalog_entries_domains_idx" ON "catalog_entries" USING gin ("domains");--> statement-breakpoint
CREATE UNIQUE INDEX "catalog_requests_team_request_idx" ON "catalog_requests" USING btree ("team_id","request_id");