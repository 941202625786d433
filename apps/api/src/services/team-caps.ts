import { DEFAULT_AGENT_MAX_CREDITS } from '@wds/contracts';
import { lockedTeamMonitorCount, type Db, type TeamLimits } from '@wds/db';
import { WdsError } from '@wds/errors';

/**
 * Limits on what a team's jobs may spend that hold without a credit limit (issue 38): the
 * deployment's defaults (WDS_MAX_MONITORS, WDS_AGENT_MAX_CREDITS), raised or lifted for a team by
 * its team_limits row (max_monitors, agent_max_credits; 0 = none); and how long one interact session
 * of the team may live (WDS_INTERACT_SESSION_MINUTES, interact_session_minutes).
 */

/**
 * An interact session's maximum life for the team: its session minutes (null: no limit of its own),
 * never beyond the deployment's ceiling (WDS_INTERACT_MAX_SESSION_SECONDS).
 */
export function sessionLifeMs(ceilingMs: number, limits: Pick<TeamLimits, 'interactSessionMinutes'>): number {
  const minutes = limits.interactSessionMinutes;
  return minutes === null ? ceilingMs : Math.min(ceilingMs, minutes * 60_000);
}

/**
 * An agent job's `maxCredits` within the team's ceiling: above it, 400 naming the field; unset,
 * Firecrawl's default 2,500, or the ceiling when that is lower.
 */
export function agentMaxCreditsWithin(asked: number | null | undefined, limits: Pick<TeamLimits, 'agentMaxCredits'>): number {
  const max = limits.agentMaxCredits;
  if (asked === null || asked === undefined) return max === null ? DEFAULT_AGENT_MAX_CREDITS : Math.min(DEFAULT_AGENT_MAX_CREDITS, max);
  if (max === null || asked <= max) return asked;
  throw new WdsError('BAD_REQUEST', {
    // A team rule: `custom`, so the envelope's error is this sentence.
    details: [{ code: 'custom', path: ['maxCredits'], message: `maxCredits must be at most ${max} for this team (its agent credit ceiling); ask the operator to raise it (WDS_AGENT_MAX_CREDITS, or the team's agent_max_credits)` }],
  });
}

/**
 * Room for one more monitor, in the transaction that inserts it (the count is taken under the
 * team's lock): 403 MONITOR_LIMIT_REACHED once the team has its maximum.
 */
export async function checkMonitorRoom(tx: Db, teamId: string, limits: Pick<TeamLimits, 'maxMonitors'>): Promise<void> {
  const max = limits.maxMonitors;
  if (max === null) return;
  const n = await lockedTeamMonitorCount(tx, teamId);
  if (n < max) return;
  throw new WdsError('FORBIDDEN', {
    code: 'MONITOR_LIMIT_REACHED',
    message: `Forbidden: this team has ${n} monitors, the most it may have (${max}). Delete one, or ask the operator to raise the team's monitor limit (WDS_MAX_MONITORS, or the team's max_monitors).`,
  });
}
