-- Per-team overrides of three limits whose defaults the API's env gives (WDS_MAX_MONITORS, WDS_AGENT_MAX_CREDITS,
-- WDS_INTERACT_SESSION_MINUTES): without a team_limits row nothing bounded a team's monitors, an agent job's
-- maxCredits or an interact session's minutes. null = the default, 0 = no limit, as for max_concurrency.
ALTER TABLE "team_limits" ADD COLUMN "max_monitors" integer;--> statement-breakpoint
ALTER TABLE "team_limits" ADD COLUMN "agent_max_credits" integer;--> statement-breakpoint
ALTER TABLE "team_limits" ADD COLUMN "interact_session_minutes" integer;
