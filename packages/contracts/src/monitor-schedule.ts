import { createHash } from 'node:crypto';
import { Cron } from 'croner';

/**
 * Monitor schedules as Firecrawl's docs define them: a five-field cron expression or a short
 * English phrase, in an IANA timezone, at least `minIntervalSeconds` apart (5 minutes; tests
 * lower it through WDS_MONITOR_MIN_INTERVAL_SECONDS, and only then are six-field crons with
 * seconds and "every N seconds" accepted). Phrases without a fixed time are spread by monitor
 * id before they become cron, so many monitors do not all fire at the same instant.
 */
export interface NormalizedSchedule {
  cron: string;
  timezone: string;
  /** The phrase the monitor was created with, kept for display. */
  text?: string;
}

export type ScheduleProblem = { path: string[]; message: string };

/** A stable number in [0, n) from the monitor id (text schedules' spread, jitter). */
export function spreadOf(monitorId: string, salt: string, n: number): number {
  if (n <= 1) return 0;
  return createHash('sha256').update(`${salt}:${monitorId}`).digest().readUInt32BE(0) % n;
}

export function isTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

/** "9:00", "9am", "5:30 PM", "17:30" → [hour, minute], or null. */
function timeOfDay(s: string): [number, number] | null {
  const m = /^(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$/i.exec(s.trim());
  if (!m) return null;
  let h = Number(m[1]);
  const min = m[2] === undefined ? 0 : Number(m[2]);
  const ampm = m[3]?.toLowerCase();
  if (ampm) {
    if (h < 1 || h > 12) return null;
    h = (h % 12) + (ampm === 'pm' ? 12 : 0);
  } else if (m[2] === undefined) return null; // a bare "9" is not a time
  if (h > 23 || min > 59) return null;
  return [h, min];
}

/** The phrases the docs list (and their obvious neighbours) → cron; null when not understood. */
export function textToCron(text: string, monitorId: string, allowSeconds: boolean): string | null {
  const t = text.trim().toLowerCase().replace(/\s+/g, ' ');
  const spread = (n: number) => spreadOf(monitorId, 'schedule', n);
  let m: RegExpExecArray | null;
  if (allowSeconds && (m = /^every (\d{1,2}) seconds?$/.exec(t))) {
    const n = Number(m[1]);
    return n >= 1 && n <= 59 ? `${spread(n)}-59/${n} * * * * *` : null;
  }
  if ((m = /^every (\d{1,2}) minutes?(?: starting at :(\d{2}))?$/.exec(t))) {
    const n = Number(m[1]);
    if (n < 1 || n > 59) return null;
    const start = m[2] === undefined ? spread(n) : Number(m[2]);
    return start < 60 ? `${start % n}-59/${n} * * * *` : null;
  }
  if (t === 'hourly' || t === 'every hour') return `${spread(60)} * * * *`;
  if ((m = /^every (\d{1,2}) hours?$/.exec(t))) {
    const n = Number(m[1]);
    return n >= 1 && n <= 23 ? `${spread(60)} ${spread(n)}-23/${n} * * *` : null;
  }
  if (t === 'daily' || t === 'every day') return `${spread(60)} ${spread(24)} * * *`;
  if ((m = /^(?:daily|every day) at (.+)$/.exec(t))) {
    const hm = timeOfDay(m[1]!);
    return hm ? `${hm[1]} ${hm[0]} * * *` : null;
  }
  if (t === 'weekly' || t === 'every week') return `${spread(60)} ${spread(24)} * * ${spread(7)}`;
  if ((m = /^(?:weekly on |every )(sunday|monday|tuesday|wednesday|thursday|friday|saturday)(?: at (.+))?$/.exec(t))) {
    const hm = m[2] ? timeOfDay(m[2]) : [spread(24), spread(60)];
    return hm ? `${hm[1]} ${hm[0]} * * ${WEEKDAYS.indexOf(m[1]!)}` : null;
  }
  return null;
}

/**
 * Compiles a cron expression at a fixed UTC offset (minutes east of UTC), or says why not.
 * croner's own `timezone` option converts through Intl at every step (~1 ms a firing on this
 * host); a fixed offset costs microseconds, so zones are handled in nextFiring.
 */
export function compileCron(expr: string, utcOffsetMinutes = 0): Cron | string {
  try {
    return new Cron(expr, { utcOffset: utcOffsetMinutes, paused: true });
  } catch (e) {
    return (e as Error).message;
  }
}

const offsetFormats = new Map<string, Intl.DateTimeFormat>();
/** The zone's offset from UTC at `at`, in minutes east. */
export function utcOffsetMinutes(timezone: string, at: Date): number {
  if (timezone === 'UTC' || timezone === 'Etc/UTC') return 0;
  let f = offsetFormats.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    offsetFormats.set(timezone, f);
  }
  const p = Object.fromEntries(f.formatToParts(at).map((x) => [x.type, x.value]));
  const local = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second));
  return Math.round((local - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
}

/** Compiled crons by pattern and offset: a tick computes the next due time of every monitor it claims. */
const cronCache = new Map<string, Cron | string>();
function cachedCron(expr: string, offset: number): Cron | string {
  const key = `${expr}|${offset}`;
  let c = cronCache.get(key);
  if (c === undefined) {
    if (cronCache.size > 10_000) cronCache.clear();
    c = compileCron(expr, offset);
    cronCache.set(key, c);
  }
  return c;
}

/**
 * The cron's next firing after `after` in `timezone`: at the zone's offset now, kept when the
 * zone has the same offset at that firing; across a daylight-saving change, croner's exact
 * (slow) zone handling decides.
 */
export function nextFiring(expr: string, timezone: string, after: Date): Date | null {
  const off = utcOffsetMinutes(timezone, after);
  const c = cachedCron(expr, off);
  if (typeof c === 'string') return null;
  const next = c.nextRun(after);
  if (!next || utcOffsetMinutes(timezone, next) === off) return next;
  return new Cron(expr, { timezone, paused: true }).nextRun(after);
}

/**
 * The shortest gap between consecutive firings, over the next 500 (a cron that fires every
 * minute on one day of the year is found: the enumeration jumps to that day).
 */
export function shortestIntervalSeconds(cron: Cron): number {
  const runs = cron.nextRuns(500, new Date(Date.UTC(2030, 0, 1)));
  if (runs.length < 2) return Number.POSITIVE_INFINITY;
  let min = Number.POSITIVE_INFINITY;
  for (let i = 1; i < runs.length; i++) min = Math.min(min, (runs[i]!.getTime() - runs[i - 1]!.getTime()) / 1000);
  return min;
}

/** The average gap over the next firings (credit estimates). */
export function averageIntervalSeconds(cron: Cron): number {
  const runs = cron.nextRuns(200, new Date(Date.UTC(2030, 0, 1)));
  if (runs.length < 2) return 30 * 24 * 3600;
  return (runs.at(-1)!.getTime() - runs[0]!.getTime()) / 1000 / (runs.length - 1);
}

export interface ScheduleInput {
  cron?: string | undefined;
  text?: string | undefined;
  timezone?: string | undefined;
}

/** Validates and normalizes a schedule; `problems` name the fields (paths under `schedule`). */
export function normalizeSchedule(s: ScheduleInput, monitorId: string, minIntervalSeconds: number): { schedule: NormalizedSchedule } | { problems: ScheduleProblem[] } {
  const timezone = s.timezone ?? 'UTC';
  if (!isTimezone(timezone)) return { problems: [{ path: ['schedule', 'timezone'], message: `unknown IANA timezone '${timezone}'` }] };
  const allowSeconds = minIntervalSeconds < 60;
  if ((s.cron === undefined) === (s.text === undefined)) return { problems: [{ path: ['schedule'], message: 'provide exactly one of `cron` or `text`' }] };
  let cron: string;
  let field: 'cron' | 'text';
  if (s.text !== undefined) {
    field = 'text';
    const c = textToCron(s.text, monitorId, allowSeconds);
    if (!c) return { problems: [{ path: ['schedule', 'text'], message: `schedule text not understood: '${s.text}' (e.g. "every 30 minutes", "every 15 minutes starting at :07", "hourly", "every 2 hours", "daily", "daily at 9:00", "weekly")` }] };
    cron = c;
  } else {
    field = 'cron';
    cron = s.cron!.trim().replace(/\s+/g, ' ');
    const fields = cron.split(' ').length;
    if (fields !== 5 && !(allowSeconds && fields === 6)) return { problems: [{ path: ['schedule', 'cron'], message: 'cron must be a five-field expression (minute hour day-of-month month day-of-week)' }] };
  }
  const compiled = compileCron(cron);
  if (typeof compiled === 'string') return { problems: [{ path: ['schedule', field], message: `invalid cron expression: ${compiled}` }] };
  const gap = shortestIntervalSeconds(compiled);
  if (!Number.isFinite(gap)) return { problems: [{ path: ['schedule', field], message: 'the schedule never fires' }] };
  if (gap < minIntervalSeconds) {
    return { problems: [{ path: ['schedule', field], message: `the schedule fires every ${gap} seconds; the minimum interval is ${minIntervalSeconds / 60 >= 1 ? `${minIntervalSeconds / 60} minutes` : `${minIntervalSeconds} seconds`}` }] };
  }
  return { schedule: { cron, timezone, ...(s.text !== undefined ? { text: s.text } : {}) } };
}

/**
 * The next time a monitor is due after `after`: the cron's next firing plus the monitor's
 * jitter (a stable offset from its id, at most `maxJitterMs` and a fifth of the schedule's
 * shortest gap, so many monitors on the same cron are spread over that window).
 */
export function nextDueAt(s: NormalizedSchedule, monitorId: string, after: Date, maxJitterMs: number): Date | null {
  const c = cachedCron(s.cron, 0);
  if (typeof c === 'string') return null;
  const j = jitterMs(c, monitorId, maxJitterMs);
  // A firing whose jittered time is still ahead of `after` counts: look from `after - jitter`.
  const next = nextFiring(s.cron, s.timezone, new Date(after.getTime() - j));
  return next ? new Date(next.getTime() + j) : null;
}

const gapCache = new Map<string, number>();
function jitterMs(c: Cron, monitorId: string, maxJitterMs: number): number {
  if (maxJitterMs <= 0) return 0;
  const key = c.getPattern() ?? '';
  let gap = gapCache.get(key);
  if (gap === undefined) {
    if (gapCache.size > 10_000) gapCache.clear();
    gap = shortestIntervalSeconds(c);
    gapCache.set(key, gap);
  }
  return spreadOf(monitorId, 'jitter', Math.max(1, Math.min(maxJitterMs, Math.floor((gap * 1000) / 5))));
}
