-- One round trip for a concurrency slot (packages/db/src/limits.ts, admission.ts): the per-team
-- advisory lock, expired slots dropped, the held ones counted and one inserted when below p_max,
-- as acquireConcurrencySlot's transaction did in six. VOLATILE: each statement sees what
-- committed before it, in particular the slots of a caller that held the lock just before.
CREATE OR REPLACE FUNCTION wds_take_concurrency_slot(p_team uuid, p_max integer, p_ttl_ms integer) RETURNS uuid
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_id uuid;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('wds-slots:' || p_team::text));
  DELETE FROM concurrency_slots WHERE team_id = p_team AND expires_at < now();
  IF (SELECT count(*) FROM concurrency_slots WHERE team_id = p_team) >= p_max THEN
    RETURN NULL;
  END IF;
  INSERT INTO concurrency_slots (team_id, expires_at) VALUES (p_team, now() + p_ttl_ms * interval '1 millisecond') RETURNING id INTO v_id;
  RETURN v_id;
END
$$;
