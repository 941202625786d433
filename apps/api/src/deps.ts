import type { Deployment } from '@wds/contracts';
import type { Db, ScrapeDoneListener } from '@wds/db';
import type { Starters } from './temporal';

/** What controllers need; built once in app.ts so tests and benches can pass their own. */
export interface ApiDeps {
  db: Db;
  starters: Starters;
  /** Hears scrape documents being stored, ahead of the workflow result; optional (tests of single controllers). */
  scrapeDone?: ScrapeDoneListener;
  /** What this deployment is configured for (an LLM or not); absent = nothing optional. */
  deployment?: Deployment;
  /** Checks the stack behind the API for /ready. */
  ready(): Promise<{ postgres: boolean; temporal: boolean }>;
}
