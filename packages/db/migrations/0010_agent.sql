CREATE TABLE "agent_messages" (
	"run_id" uuid NOT NULL,
	"seq" bigserial NOT NULL,
	"step" integer NOT NULL,
	"role" text NOT NULL,
	"content" text,
	"tool_calls" jsonb,
	"tool_call_id" text,
	"result" jsonb,
	"key" text NOT NULL,
	"credits" integer DEFAULT 0 NOT NULL,
	"reservation_key" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_messages_run_id_seq_pk" PRIMARY KEY("run_id","seq")
);
--> statement-breakpoint
CREATE TABLE "agent_runs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"root_id" uuid NOT NULL,
	"parent_id" uuid,
	"thread_id" uuid NOT NULL,
	"thread_turn" integer DEFAULT 1 NOT NULL,
	"name" text DEFAULT 'orchestrator' NOT NULL,
	"status" text DEFAULT 'processing' NOT NULL,
	"state" text DEFAULT 'running' NOT NULL,
	"options" jsonb NOT NULL,
	"data" jsonb,
	"message" text,
	"error" text,
	"credits_used" integer DEFAULT 0 NOT NULL,
	"steps" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"expires_at" timestamp with time zone DEFAULT now() + interval '24 hours' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_snapshots" (
	"id" uuid PRIMARY KEY NOT NULL,
	"job_id" uuid NOT NULL,
	"run_id" uuid NOT NULL,
	"artifact" text NOT NULL,
	"kind" text NOT NULL,
	"content" text NOT NULL,
	"url" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "agent_messages" ADD CONSTRAINT "agent_messages_run_id_agent_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."agent_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_runs" ADD CONSTRAINT "agent_runs_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_snapshots" ADD CONSTRAINT "agent_snapshots_run_id_agent_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."agent_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "agent_messages_run_key_idx" ON "agent_messages" USING btree ("run_id","key");--> statement-breakpoint
CREATE INDEX "agent_messages_run_step_idx" ON "agent_messages" USING btree ("run_id","step");--> statement-breakpoint
CREATE INDEX "agent_runs_team_created_idx" ON "agent_runs" USING btree ("team_id","created_at") WHERE "agent_runs"."parent_id" IS NULL;--> statement-breakpoint
CREATE INDEX "agent_runs_root_idx" ON "agent_runs" USING btree ("root_id");--> statement-breakpoint
CREATE INDEX "agent_runs_thread_idx" ON "agent_runs" USING btree ("thread_id","thread_turn");--> statement-breakpoint
CREATE INDEX "agent_snapshots_job_artifact_idx" ON "agent_snapshots" USING btree ("job_id","artifact","created_at");