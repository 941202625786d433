CREATE TABLE "concurrency_slots" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"team_id" uuid NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rate_windows" (
	"team_id" uuid NOT NULL,
	"limit_class" text NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "rate_windows_team_id_limit_class_window_start_pk" PRIMARY KEY("team_id","limit_class","window_start")
);
--> statement-breakpoint
CREATE TABLE "team_limits" (
	"team_id" uuid PRIMARY KEY NOT NULL,
	"rate_per_minute" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"max_concurrency" integer,
	"credit_limit" integer,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "concurrency_slots" ADD CONSTRAINT "concurrency_slots_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rate_windows" ADD CONSTRAINT "rate_windows_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "team_limits" ADD CONSTRAINT "team_limits_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "concurrency_slots_team_idx" ON "concurrency_slots" USING btree ("team_id");