CREATE TABLE "interact_calls" (
	"id" uuid PRIMARY KEY NOT NULL,
	"scrape_id" uuid NOT NULL,
	"team_id" uuid NOT NULL,
	"code" text,
	"prompt" text,
	"timeout_ms" integer NOT NULL,
	"snapshot" jsonb,
	"generated_code" text,
	"result" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "interact_sessions" (
	"scrape_id" uuid PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"queue" text NOT NULL,
	"state" text NOT NULL,
	"end_reason" text,
	"slot_id" uuid,
	"prompted" boolean DEFAULT false NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "interact_calls" ADD CONSTRAINT "interact_calls_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "interact_sessions" ADD CONSTRAINT "interact_sessions_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "interact_calls_created_idx" ON "interact_calls" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "interact_sessions_team_state_idx" ON "interact_sessions" USING btree ("team_id","state");