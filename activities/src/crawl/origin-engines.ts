import { browserFirst, loadOriginEngine, noteRenderedPage, noteStaticPage, type Db, type OriginEngine } from '@wds/db';
import type { PageRendering } from '../browser/escalation';

/**
 * What each job has learned about its origins' pages (crawl_origin_engines, see @wds/db's
 * `browserFirst`): kept in Postgres so every fetch worker, and a worker started after a crash,
 * reaches the same decision, and in memory so a page costs no query. Both facts only grow (a
 * count up to the threshold, a flag), so a stale copy decides later, never differently; each
 * write returns what the job knows by then, other workers' pages included.
 */
export function createOriginEngines(db: Db) {
  const memory = new Map<string, OriginEngine>();
  const remember = (k: string, o: OriginEngine) => {
    if (!memory.has(k) && memory.size >= 2_000) memory.delete(memory.keys().next().value!);
    memory.set(k, o);
    return o;
  };
  const known = async (jobId: string, origin: string) => {
    const k = `${jobId} ${origin}`;
    return memory.get(k) ?? remember(k, await loadOriginEngine(db, jobId, origin));
  };
  return {
    /** Whether the origin's pages go to the browser engine without an HTTP fetch first. */
    async browserFirst(jobId: string, origin: string): Promise<boolean> {
      return browserFirst(await known(jobId, origin));
    },
    /** Learns from a page the HTTP engine fetched and classified; writes only while the origin is undecided. */
    async learn(jobId: string, origin: string, rendering: PageRendering): Promise<void> {
      if (rendering === 'other') return;
      const o = await known(jobId, origin);
      if (o.static || browserFirst(o)) return;
      const k = `${jobId} ${origin}`;
      remember(k, rendering === 'script' ? await noteRenderedPage(db, jobId, origin) : await noteStaticPage(db, jobId, origin));
    },
  };
}

export type OriginEngines = ReturnType<typeof createOriginEngines>;
