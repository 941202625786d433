-- monitor_mail_budgets: each team's token bucket of confirmation emails (mail to addresses that have not opted in).
-- search_pages.shareable: whether a shared index (WDS_SEARCH_SHARED_INDEX) may show the row to other teams; false for
-- pages fetched with the team's headers, browser profile or actions, and for every row written before this migration
-- (how those were fetched is unknown: they stay in their team's own index and become shareable when stored again).
CREATE TABLE "monitor_mail_budgets" (
	"team_id" uuid PRIMARY KEY NOT NULL,
	"tokens" double precision NOT NULL,
	"refilled_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "search_pages" ADD COLUMN "shareable" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "monitor_mail_budgets" ADD CONSTRAINT "monitor_mail_budgets_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;