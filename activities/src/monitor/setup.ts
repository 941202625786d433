import { hashText, jsonModeKey, type ChangeMode } from '@wds/changes';
import { scrapeOptionsSchema, type ScrapeOptions } from '@wds/contracts';
import type { MonitorRow } from '@wds/db';

/**
 * How one target of one monitor checks its pages, parsed once per monitor version: the scrape
 * options (the target's, fresh — monitors never read the cache), the history the pages compare
 * with (its tag), what is compared (changeTracking `modes`, json mode's schema/prompt), and
 * whether the goal judge runs.
 */
export interface TargetSetup {
  type: 'scrape' | 'crawl' | 'search';
  options: ScrapeOptions;
  /**
   * The page history's tag: the monitor's own (scrape targets share it, plus the changeTracking
   * format's `tag`); a crawl target's memory of its site and a search target's results are the
   * target's own, so one target's pages are never another's `removed` or `already_seen`.
   */
  tag: string;
  /** False under zero data retention: hashes only. */
  keepContent: boolean;
  modes: ChangeMode[];
  /** json mode: what the model extracts with (null: no json mode). */
  json: { schema?: Record<string, unknown>; prompt?: string; key: string } | null;
  /** The monitor's goal when judging is on (judgeEnabled and a non-empty goal), else null. */
  goal: string | null;
  /** The goal's identity: a verdict made under another goal is not reused (search results are judged again). */
  goalKey: string | null;
}

interface ChangeTrackingEntry {
  type: 'changeTracking';
  modes?: ChangeMode[];
  schema?: Record<string, unknown>;
  prompt?: string;
  tag?: string | null;
}

const cache = new Map<string, TargetSetup>();

/** The setup of a target of a monitor (cached by monitor version and target). */
export function targetSetup(m: MonitorRow | undefined, monitorId: string, targetId: string): TargetSetup {
  const key = `${monitorId}|${m?.updatedAt.getTime()}|${targetId}`;
  let s = cache.get(key);
  if (!s) {
    if (cache.size > 20_000) cache.clear();
    s = parseSetup(m, monitorId, targetId);
    cache.set(key, s);
  }
  return s;
}

function parseSetup(m: MonitorRow | undefined, monitorId: string, targetId: string): TargetSetup {
  const target = m?.targets.find((t) => t.id === targetId) as { type?: TargetSetup['type']; scrapeOptions?: Record<string, unknown> } | undefined;
  const type = target?.type ?? 'scrape';
  const options = scrapeOptionsSchema.parse({ ...(target?.scrapeOptions ?? {}), maxAge: 0 });
  const ct = options.formats.find((f) => f.type === 'changeTracking') as ChangeTrackingEntry | undefined;
  const own = type === 'scrape' ? '' : `:${type}:${targetId}`;
  const tag = `monitor:${monitorId}${own}${ct?.tag ? `:${ct.tag}` : ''}`;
  const modes: ChangeMode[] = ct?.modes?.length ? [...new Set(ct.modes)] : ['git-diff'];
  const json = modes.includes('json') && ct && (ct.schema !== undefined || ct.prompt) ? { schema: ct.schema, prompt: ct.prompt, key: jsonModeKey(ct.schema, ct.prompt) } : null;
  const goal = m?.judgeEnabled && m.goal?.trim() ? m.goal.trim() : null;
  return {
    type, options, tag, modes, json, goal,
    goalKey: goal ? hashText(`goal:${goal}`) : null,
    keepContent: !(m?.zeroDataRetention || options.zeroDataRetention),
  };
}

/** The page's changes need the model: json mode's extraction, or the goal judge (when a model is there to run them). */
export function needsModel(s: TargetSetup, outcome: string, llm: boolean): boolean {
  if (!llm) return false;
  if (s.json && (outcome === 'new' || outcome === 'changed')) return true;
  return !!s.goal && outcome === 'changed';
}
