CREATE TABLE "job_event_heads" (
	"job_id" uuid PRIMARY KEY NOT NULL,
	"last_seq" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "job_events" (
	"job_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"type" text NOT NULL,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"idempotency_key" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "job_events_job_id_seq_pk" PRIMARY KEY("job_id","seq")
);
--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"delivery_id" bigint NOT NULL,
	"attempt" integer NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"duration_ms" integer NOT NULL,
	"status_code" integer,
	"error" text,
	CONSTRAINT "webhook_attempts_delivery_id_attempt_pk" PRIMARY KEY("delivery_id","attempt")
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"job_id" uuid NOT NULL,
	"job_kind" text NOT NULL,
	"event_seq" integer NOT NULL,
	"url" text NOT NULL,
	"origin" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "credit_ledger" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"team_id" uuid NOT NULL,
	"job_id" uuid NOT NULL,
	"job_kind" text NOT NULL,
	"entry" text NOT NULL,
	"amount" integer NOT NULL,
	"reservation_key" text,
	"released" integer DEFAULT 0 NOT NULL,
	"idempotency_key" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "credit_ledger_amount_check" CHECK ("credit_ledger"."amount" >= 0 AND "credit_ledger"."released" >= 0),
	CONSTRAINT "credit_ledger_entry_check" CHECK ("credit_ledger"."entry" IN ('reservation', 'charge', 'release'))
);
--> statement-breakpoint
CREATE TABLE "team_credit_balances" (
	"team_id" uuid NOT NULL,
	"shard" smallint NOT NULL,
	"used" bigint DEFAULT 0 NOT NULL,
	"reserved" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "team_credit_balances_team_id_shard_pk" PRIMARY KEY("team_id","shard")
);
--> statement-breakpoint
-- The outbox held whole documents; deliveries are now derived from job_events. Deliveries still
-- pending in it when this migration runs are not carried over.
DROP TABLE "webhook_outbox" CASCADE;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_fk" FOREIGN KEY ("job_id","event_seq") REFERENCES "public"."job_events"("job_id","seq") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credit_ledger" ADD CONSTRAINT "credit_ledger_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "team_credit_balances" ADD CONSTRAINT "team_credit_balances_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "public"."teams"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "job_events_job_key_idx" ON "job_events" USING btree ("job_id","idempotency_key");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_event_idx" ON "webhook_deliveries" USING btree ("job_id","event_seq");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE UNIQUE INDEX "credit_ledger_team_key_idx" ON "credit_ledger" USING btree ("team_id","idempotency_key");--> statement-breakpoint
CREATE INDEX "credit_ledger_job_idx" ON "credit_ledger" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "credit_ledger_settles_idx" ON "credit_ledger" USING btree ("team_id","reservation_key") WHERE "credit_ledger"."reservation_key" IS NOT NULL;
--> statement-breakpoint
-- Opening entries: every job that billed credits before the ledger existed gets one charge with
-- its total (crawls and batches: the sum of their documents, which their final credits_used
-- copies), keyed opening:<job id>. Pages a running crawl stores from now on are charged per page;
-- those stored before are in its opening entry and never charged again (a page is charged only
-- by the statement that stores its document).
INSERT INTO "credit_ledger" ("team_id", "job_id", "job_kind", "entry", "amount", "idempotency_key", "created_at")
SELECT "team_id", "id", 'scrape', 'charge', "credits_used", 'opening:' || "id", coalesce("completed_at", "created_at")
FROM "scrape_jobs" WHERE "credits_used" > 0
UNION ALL
SELECT j."team_id", j."id", j."kind", 'charge', greatest(j."credits_used", coalesce(d."credits", 0)), 'opening:' || j."id", coalesce(j."completed_at", j."created_at")
FROM "crawl_jobs" j LEFT JOIN (SELECT "job_id", sum("credits")::int AS "credits" FROM "crawl_documents" GROUP BY "job_id") d ON d."job_id" = j."id"
WHERE greatest(j."credits_used", coalesce(d."credits", 0)) > 0
UNION ALL
SELECT "team_id", "id", 'parse', 'charge', "credits_used", 'opening:' || "id", coalesce("completed_at", "created_at")
FROM "parse_jobs" WHERE "credits_used" > 0;
--> statement-breakpoint
-- The opening balances go to shard 1 (any shard does: a balance is the sum of its shards).
INSERT INTO "team_credit_balances" ("team_id", "shard", "used")
SELECT "team_id", 1, sum("amount") FROM "credit_ledger" WHERE "entry" = 'charge' GROUP BY "team_id";
