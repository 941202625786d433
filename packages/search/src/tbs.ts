import type { TimeFilter } from './types';

/**
 * Firecrawl's (Google's) `tbs`: comma-separated parts, any of
 *   qdr:h|d|w|m|y (past hour … year, optionally with a count: qdr:d3),
 *   cdr:1,cd_min:MM/DD/YYYY,cd_max:MM/DD/YYYY (a custom range, either end optional),
 *   sbd:1 (sort by date; sbd:0 by relevance).
 * Returns the filter, or an error message for a value it cannot read (the API answers 400 with it).
 */
export function parseTbs(tbs: string, now = new Date()): TimeFilter | { error: string } {
  const out: TimeFilter = { since: null, until: null, sortByDate: false, range: null };
  let custom = false;
  for (const raw of tbs.split(',')) {
    const part = raw.trim();
    if (!part) continue;
    const [key, value = ''] = part.split(':', 2) as [string, string?];
    switch (key) {
      case 'qdr': {
        const m = /^([hdwmy])(\d{1,4})?$/.exec(value);
        if (!m) return { error: `tbs: qdr must be h, d, w, m or y (optionally followed by a count), got '${value}'` };
        const unit = m[1] as TimeFilter['range'] & string;
        const n = m[2] ? Number(m[2]) : 1;
        if (n < 1) return { error: 'tbs: a qdr count must be at least 1' };
        out.range = unit;
        out.since = ago(now, unit, n);
        break;
      }
      case 'cdr':
        if (value !== '1' && value !== '0') return { error: `tbs: cdr must be 1, got '${value}'` };
        custom = value === '1';
        break;
      case 'cd_min':
      case 'cd_max': {
        const d = usDate(value, key === 'cd_max');
        if (!d) return { error: `tbs: ${key} must be a date MM/DD/YYYY, got '${value}'` };
        if (key === 'cd_min') out.since = d;
        else out.until = d;
        break;
      }
      case 'sbd':
        if (value !== '1' && value !== '0') return { error: `tbs: sbd must be 1 or 0, got '${value}'` };
        out.sortByDate = value === '1';
        break;
      default:
        return { error: `tbs: unknown part '${part}' (supported: qdr:h|d|w|m|y, cdr:1 with cd_min/cd_max, sbd:1)` };
    }
  }
  const hasBounds = tbs.includes('cd_min') || tbs.includes('cd_max');
  if (hasBounds && !custom) return { error: 'tbs: cd_min / cd_max need cdr:1' };
  if (out.since && out.until && out.since > out.until) return { error: 'tbs: cd_min is after cd_max' };
  return out;
}

function ago(now: Date, unit: string, n: number): Date {
  const ms = { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 }[unit];
  if (ms) return new Date(now.getTime() - n * ms);
  const d = new Date(now);
  if (unit === 'm') d.setUTCMonth(d.getUTCMonth() - n);
  else d.setUTCFullYear(d.getUTCFullYear() - n);
  return d;
}

/** MM/DD/YYYY (M/D accepted) in UTC; the end of that day for an upper bound. */
function usDate(s: string, endOfDay: boolean): Date | null {
  const m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(s);
  if (!m) return null;
  const [mo, da, yr] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const d = new Date(Date.UTC(yr, mo - 1, da, endOfDay ? 23 : 0, endOfDay ? 59 : 0, endOfDay ? 59 : 0, endOfDay ? 999 : 0));
  return d.getUTCMonth() === mo - 1 && d.getUTCDate() === da ? d : null;
}
