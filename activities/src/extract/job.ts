import type { StoredExtractOptions } from '@wds/contracts';
import { loadExtractJob, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';

export interface ExtractJobInfo {
  id: string;
  teamId: string;
  options: StoredExtractOptions;
}

/** Options never change after the API wrote them: each worker keeps the recent ones. */
const cache = new Map<string, ExtractJobInfo>();

export async function loadExtractInfo(db: Db, jobId: string): Promise<ExtractJobInfo> {
  const hit = cache.get(jobId);
  if (hit) return hit;
  const row = await loadExtractJob(db, jobId);
  if (!row) throw new WdsError('NOT_FOUND', { message: `Extract job ${jobId} not found` });
  const info = { id: row.id, teamId: row.teamId, options: row.options as StoredExtractOptions };
  if (cache.size >= 500) cache.delete(cache.keys().next().value!);
  cache.set(jobId, info);
  return info;
}

/** The extraction request as the model reads it: the caller's system prompt (their own words) before their prompt. */
export function requestText(o: StoredExtractOptions): string | undefined {
  const parts = [o.systemPrompt, o.prompt].filter((x): x is string => !!x);
  return parts.length ? parts.join('\n\n') : undefined;
}
