CREATE TABLE "monitor_email_recipients" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"team_id" uuid NOT NULL,
	"email" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"source" text DEFAULT 'opt_in' NOT NULL,
	"nonce" integer DEFAULT 0 NOT NULL,
	"monitor_id" uuid,
	"confirm_due" boolean DEFAULT false NOT NULL,
	"confirm_attempts" integer DEFAULT 0 NOT NULL,
	"confirm_next_attempt_at" timestamp with time zone,
	"confirm_requested_at" timestamp with time zone,
	"confirm_sent_at" timestamp with time zone,
	"confirm_error" text,
	"confirmed_at" timestamp with time zone,
	"unsubscribed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "monitor_emails" ADD COLUMN "sent_to" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "monitor_email_recipients" ADD CONSTRAINT "monitor_email_recipients_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "monitor_email_recipients_team_email_idx" ON "monitor_email_recipients" USING btree ("team_id","email");--> statement-breakpoint
CREATE INDEX "monitor_email_recipients_due_idx" ON "monitor_email_recipients" USING btree ("confirm_next_attempt_at") WHERE confirm_due;