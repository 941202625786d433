import type { Deployment } from '@wds/contracts';
import type { Db, ScrapeDoneListener } from '@wds/db';
import type { SearchProvider } from '@wds/search';
import type { ScrapeDispatch } from '@wds/workflows/scrape';
import type { JobWorkflows, Starters } from './temporal';

/** What controllers need; built once in app.ts so tests and benches can pass their own. */
export interface ApiDeps {
  db: Db;
  /** Workflow operations by JobSpec (services/jobs.ts uses them). */
  workflows: JobWorkflows;
  starters: Starters;
  /** Hears scrapes ending (document or failure stored), ahead of the workflow result; optional (tests of single controllers). */
  scrapeDone?: ScrapeDoneListener;
  /** Where single scrapes run (WDS_SCRAPE_FETCH); direct dispatch also needs `scrapeDone` (without it: the scrape workflow). */
  scrapeDispatch: ScrapeDispatch;
  /** What this deployment is configured for (an LLM or not); absent = nothing optional. */
  deployment?: Deployment;
  /** Who answers POST /v2/search; absent = the own index, team by team. */
  search?: SearchProvider;
  /** The own index answers every team with every team's pages (map's search ranking too). */
  sharedIndex?: boolean;
  /** Checks the stack behind the API for /ready. */
  ready(): Promise<{ postgres: boolean; temporal: boolean }>;
}
