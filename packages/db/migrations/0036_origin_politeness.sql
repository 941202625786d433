CREATE UNLOGGED TABLE "origin_budgets" (
	"origin" text PRIMARY KEY NOT NULL,
	"last_start_at" timestamp with time zone,
	"backoff_until" timestamp with time zone,
	"backoff_level" integer DEFAULT 0 NOT NULL,
	"backoff_changed_at" timestamp with time zone,
	"recovered_at" timestamp with time zone,
	"backoff_reason" text
);
--> statement-breakpoint
CREATE UNLOGGED TABLE "origin_holds" (
	"origin" text NOT NULL,
	"holder" text NOT NULL,
	"in_flight" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "origin_holds_origin_holder_pk" PRIMARY KEY("origin","holder")
);
--> statement-breakpoint
CREATE UNLOGGED TABLE "politeness_holders" (
	"holder" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "origin_holds_holder_idx" ON "origin_holds" USING btree ("holder");--> statement-breakpoint
-- The budget row of an origin, created if missing, locked FOR UPDATE until the caller's transaction ends: every
-- function below starts with it, so the statements of all workers on one origin are serialised.
CREATE OR REPLACE FUNCTION wds_origin_row(p_origin text) RETURNS origin_budgets
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  b origin_budgets%ROWTYPE;
BEGIN
  SELECT * INTO b FROM origin_budgets WHERE origin = p_origin FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO origin_budgets (origin) VALUES (p_origin) ON CONFLICT DO NOTHING;
    SELECT * INTO b FROM origin_budgets WHERE origin = p_origin FOR UPDATE;
  END IF;
  RETURN b;
END
$$;
--> statement-breakpoint
-- The politeness budget of an origin (packages/db/src/origin-budget.ts), one round trip per call. The origin's
-- budget row is locked first (FOR UPDATE), so the count of live holds and the reserved start are consistent
-- across every worker; VOLATILE: each statement sees what committed before it, in particular the holds of the
-- caller that held the lock just before. A start is reserved, not polled for: a request granted a slot
-- learns when it may start (the interval after the latest reservation, the backoff's end) and waits for it.
CREATE OR REPLACE FUNCTION wds_origin_take(p_origin text, p_holder text, p_cap integer, p_interval_ms integer, p_recovery_ms integer, p_deadline_in_ms integer)
RETURNS TABLE (o_granted boolean, o_start_in_ms integer, o_backoff_in_ms integer, o_level integer, o_in_flight integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  b origin_budgets%ROWTYPE;
  v_now timestamptz;
  v_gap double precision;
  v_start timestamptz;
BEGIN
  b := wds_origin_row(p_origin);
  v_now := clock_timestamp();
  SELECT coalesce(sum(h.in_flight), 0)::integer INTO o_in_flight
    FROM origin_holds h JOIN politeness_holders p ON p.holder = h.holder
    WHERE h.origin = p_origin AND p.expires_at > v_now;
  o_level := b.backoff_level;
  o_backoff_in_ms := CASE WHEN b.backoff_until > v_now THEN ceil(extract(epoch FROM b.backoff_until - v_now) * 1000)::integer END;
  IF p_cap > 0 AND o_in_flight >= p_cap THEN
    o_granted := false;
    RETURN NEXT;
    RETURN;
  END IF;
  -- While recovering from a backoff, starts are spaced by the recovery interval doubled per step left.
  v_gap := greatest(p_interval_ms, CASE WHEN b.backoff_level > 0 THEN least(p_recovery_ms * power(2, b.backoff_level - 1), 60000) ELSE 0 END);
  v_start := greatest(v_now, b.last_start_at + v_gap * interval '1 millisecond', b.backoff_until);
  o_start_in_ms := ceil(extract(epoch FROM v_start - v_now) * 1000)::integer;
  IF p_deadline_in_ms IS NOT NULL AND o_start_in_ms > p_deadline_in_ms THEN
    o_granted := false; -- its turn comes after its deadline: nothing reserved
    RETURN NEXT;
    RETURN;
  END IF;
  UPDATE origin_budgets SET last_start_at = v_start WHERE origin = p_origin;
  INSERT INTO origin_holds AS h (origin, holder, in_flight) VALUES (p_origin, p_holder, 1)
    ON CONFLICT (origin, holder) DO UPDATE SET in_flight = h.in_flight + 1;
  o_granted := true;
  o_in_flight := o_in_flight + 1;
  RETURN NEXT;
END
$$;
--> statement-breakpoint
-- A 429/503 (or a burst of connection resets) from an origin: one more step of backoff, for everyone. An answer
-- to a request that started before the last step was added adds none (requests in flight together answer
-- together), though a longer Retry-After still counts. Retry-After wins over the exponential delay (base × 2^step,
-- jittered ±50%); both are capped at p_max_ms. Announced on wds_origin_backoff so every worker's fast path knows.
CREATE OR REPLACE FUNCTION wds_origin_backoff(p_origin text, p_retry_after_ms integer, p_started_ms_ago integer, p_base_ms integer, p_max_ms integer, p_reason text)
RETURNS TABLE (o_backoff_in_ms integer, o_level integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  b origin_budgets%ROWTYPE;
  v_now timestamptz;
  v_delay double precision;
BEGIN
  b := wds_origin_row(p_origin);
  v_now := clock_timestamp();
  IF b.backoff_level > 0 AND b.backoff_changed_at > v_now - p_started_ms_ago * interval '1 millisecond' THEN
    IF p_retry_after_ms IS NOT NULL THEN
      UPDATE origin_budgets SET backoff_until = greatest(backoff_until, v_now + least(p_retry_after_ms, p_max_ms) * interval '1 millisecond')
        WHERE origin = p_origin RETURNING * INTO b;
    END IF;
  ELSE
    v_delay := least(coalesce(p_retry_after_ms::double precision, p_base_ms * power(2, least(b.backoff_level, 20)) * (0.5 + random())), p_max_ms);
    UPDATE origin_budgets SET backoff_level = least(b.backoff_level + 1, 20), backoff_until = greatest(backoff_until, v_now + v_delay * interval '1 millisecond'),
        backoff_changed_at = v_now, backoff_reason = p_reason
      WHERE origin = p_origin RETURNING * INTO b;
  END IF;
  o_level := b.backoff_level;
  o_backoff_in_ms := greatest(0, ceil(extract(epoch FROM b.backoff_until - v_now) * 1000))::integer;
  PERFORM pg_notify('wds_origin_backoff', json_build_object('origin', p_origin, 'inMs', o_backoff_in_ms, 'level', o_level)::text);
  RETURN NEXT;
END
$$;
--> statement-breakpoint
-- A success from an origin in backoff whose window has passed: one step less, at most one step per p_step_ms.
-- Returns the new step (announced), or NULL when nothing changed.
CREATE OR REPLACE FUNCTION wds_origin_recover(p_origin text, p_step_ms integer) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_level integer;
  v_now timestamptz := clock_timestamp();
BEGIN
  UPDATE origin_budgets SET backoff_level = backoff_level - 1, recovered_at = v_now
    WHERE origin = p_origin AND backoff_level > 0 AND (backoff_until IS NULL OR backoff_until <= v_now)
      AND greatest(backoff_changed_at, recovered_at) <= v_now - p_step_ms * interval '1 millisecond'
    RETURNING backoff_level INTO v_level;
  IF FOUND THEN
    PERFORM pg_notify('wds_origin_backoff', json_build_object('origin', p_origin, 'inMs', 0, 'level', v_level)::text);
  END IF;
  RETURN v_level;
END
$$;
--> statement-breakpoint
-- A granted request is about to start, `p_late_ms` after the start it reserved (`p_reserved_in_ms_ago` ago): a
-- process that woke late must not crowd the request reserved after it. Nobody reserved after it: it starts now,
-- and the next reservation counts from now. Someone did and it is later than `p_tolerance_ms`: it takes a new
-- start after the latest reservation (returned, in ms from now; the caller waits and asks again); else 0: start.
CREATE OR REPLACE FUNCTION wds_origin_begin(p_origin text, p_reserved_ms_ago integer, p_interval_ms integer, p_recovery_ms integer, p_tolerance_ms integer)
RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  b origin_budgets%ROWTYPE;
  v_now timestamptz := clock_timestamp();
  v_reserved timestamptz := v_now - p_reserved_ms_ago * interval '1 millisecond';
  v_gap double precision;
  v_start timestamptz;
BEGIN
  SELECT * INTO b FROM origin_budgets WHERE origin = p_origin FOR UPDATE;
  IF NOT FOUND THEN
    RETURN 0;
  END IF;
  -- Reservations are whole milliseconds apart at least: within 1 ms of this one is this one.
  IF b.last_start_at IS NULL OR b.last_start_at <= v_reserved + interval '1 millisecond' THEN
    UPDATE origin_budgets SET last_start_at = greatest(last_start_at, v_now) WHERE origin = p_origin;
    RETURN 0;
  END IF;
  IF p_reserved_ms_ago <= p_tolerance_ms THEN
    RETURN 0;
  END IF;
  v_gap := greatest(p_interval_ms, CASE WHEN b.backoff_level > 0 THEN least(p_recovery_ms * power(2, b.backoff_level - 1), 60000) ELSE 0 END);
  v_start := greatest(v_now, b.last_start_at + v_gap * interval '1 millisecond', b.backoff_until);
  UPDATE origin_budgets SET last_start_at = v_start WHERE origin = p_origin;
  RETURN ceil(extract(epoch FROM v_start - v_now) * 1000)::integer;
END
$$;
