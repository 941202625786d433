/**
 * Crawler-trap guards: links a crawl does not follow however they match its scope, because no
 * real site needs them and trap sites (infinite calendars, session ids in URLs, relative links
 * that nest for ever) produce them without end. The limits follow Heritrix's decide rules
 * (TooLongUri, TooManyPathSegments, PathologicalPath), plus a cap on query variants per path
 * (StormCrawler and Nutch leave that to a regex filter; here it is on by default).
 */
export const TRAP_LIMITS = {
  /** The longest URL followed: what the old IE limit made the web's de-facto maximum (Heritrix's default). */
  maxUrlLength: 2_083,
  /** Path segments: `/a/b/c` has three (Heritrix's default 20). */
  maxPathSegments: 20,
  /** A run of one to three segments repeated this many times in a row (`/a/a/a`, `/a/b/a/b/a/b`) is a loop, not a site's structure. */
  maxRepeats: 3,
  /** Distinct query strings per path that one worker process follows for a crawl (a calendar's `?month=`, session ids). */
  maxQueryVariants: 50,
  /** Paths whose variants are counted per crawl and process; beyond, the oldest are forgotten (memory stays bounded). */
  trackedPaths: 10_000,
} as const;

export type TrapReason = 'trap-length' | 'trap-segments' | 'trap-repeat' | 'trap-variants';

/** Whether the path repeats a run of 1–3 segments `maxRepeats` times in a row. */
export function repeatsSegments(segments: string[], maxRepeats: number = TRAP_LIMITS.maxRepeats): boolean {
  for (let run = 1; run <= 3; run++) {
    for (let i = 0; i + run * maxRepeats <= segments.length; i++) {
      let times = 1;
      for (let j = i + run; j + run <= segments.length; j += run) {
        let same = true;
        for (let k = 0; k < run && same; k++) same = segments[j + k] === segments[i + k];
        if (!same) break;
        if (++times >= maxRepeats) return true;
      }
    }
  }
  return false;
}

/**
 * The guards of one crawl in one process. The query-variant count is per process (a crawl's
 * batches on one worker share it): across a fleet a path gets at most this many variants per
 * worker, which bounds a trap without a statement per link.
 */
export function createTrapGuard(limits: typeof TRAP_LIMITS = TRAP_LIMITS) {
  const variants = new Map<string, Set<string>>();
  /** `url` as fetched, `pathname` its path, `key` its frontier key. */
  return function trapOf(url: string, pathname: string, key: string): TrapReason | null {
    if (url.length > limits.maxUrlLength) return 'trap-length';
    const segments = pathname.split('/').filter(Boolean);
    if (segments.length > limits.maxPathSegments) return 'trap-segments';
    if (repeatsSegments(segments, limits.maxRepeats)) return 'trap-repeat';
    const q = key.indexOf('?');
    if (q < 0) return null;
    const path = key.slice(0, q);
    let seen = variants.get(path);
    if (!seen) {
      if (variants.size >= limits.trackedPaths) variants.delete(variants.keys().next().value!);
      variants.set(path, (seen = new Set()));
    }
    if (seen.has(key)) return null;
    if (seen.size >= limits.maxQueryVariants) return 'trap-variants';
    seen.add(key);
    return null;
  };
}
