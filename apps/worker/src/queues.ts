import { createRequire } from 'node:module';
import {
  createAgentBrowserActivities,
  createAgentControlActivities,
  createAgentFetchActivities,
  createAgentLlmActivities,
  createBrowserActivities,
  createCatalogControlActivities,
  createCatalogFetchActivities,
  createCrawlActivities,
  createCrawlBrowserActivities,
  createCrawlControlActivities,
  createExtractControlActivities,
  createExtractFetchActivities,
  createExtractLlmActivities,
  createCrawlLlmActivities,
  createInteractControlActivities,
  createInteractLlmActivities,
  createInteractReplayActivities,
  createInteractSessionActivities,
  createLlmActivities,
  createMapActivities,
  createMediaActivities,
  MEDIA_URL_TTL_SECONDS,
  createMonitorControlActivities,
  createMonitorFetchActivities,
  createMonitorLlmActivities,
  createParseActivities,
  createScrapeActivities,
  createStoreActivities,
  createTokenBudget,
  deploymentSearch,
  gatedRenderer,
  type BrowserAvailability,
  type QueueAvailability,
  type WebSearch,
} from '@wds/activities';
import { agentModelsOf, searchEnvOf } from '@wds/config/common';
import { createSearchProvider } from '@wds/search';
import type { Db } from '@wds/db';
import type { LlmClient } from '@wds/llm';
import type { BrowserPool } from '@wds/browser';
import type { GuardedProxy, MediaTools } from '@wds/media';
import type { FileStore } from '@wds/storage';
import { type TaskQueue, TaskQueues } from '@wds/workflows/common';
import type { WorkerOptions } from '@temporalio/worker';
import { browserActivitySlots } from './browser';
import type { WorkerEnv } from './env';
import type { InteractResources } from './interact';

const require = createRequire(import.meta.url);

/** Process-wide resources some queues need; created in main.ts only for the queues served. */
export interface QueueResources {
  db: Db;
  /** Asks Temporal whether a worker polls wds-browser (fetch queue: engine choice). */
  browserAvailable: BrowserAvailability;
  /** Asks Temporal whether a worker polls wds-media (fetch queue: the audio/video formats answer 503 without one). */
  mediaAvailable?: QueueAvailability;
  /** Only when this process serves wds-browser. */
  browser?: { pool: BrowserPool; files: FileStore; interact: InteractResources };
  /** Only when this process serves wds-media (and found ffmpeg). */
  media?: { tools: MediaTools; proxy: () => Promise<GuardedProxy>; files: FileStore };
  /** Only when an LLM is configured (OPENAI_API_KEY / OPENAI_BASE_URL / OLLAMA_BASE_URL). */
  llm?: LlmClient;
  /** An LLM is configured for the deployment (whether or not this process serves wds-llm): single scrapes get the optional model work. */
  llmConfigured?: boolean;
  /** The bundled workflow code (workflow-bundle.ts); without it the control worker bundles at start. */
  workflows?: Pick<WorkerOptions, 'workflowBundle'>;
}

/** Per queue: which workflows/activities it serves and how many slots (sized by resource profile). */
export function queueOptions(queue: TaskQueue, env: WorkerEnv, res: QueueResources): Omit<WorkerOptions, 'connection' | 'namespace' | 'taskQueue'> | null {
  const { db } = res;
  const pageDeps = { db, allowPrivateNetwork: env.WDS_ALLOW_PRIVATE_NETWORK, maxBodyBytes: env.WDS_MAX_BODY_BYTES };
  const scrapeActivities = () => createScrapeActivities({ ...pageDeps, browserAvailable: res.browserAvailable, mediaAvailable: res.mediaAvailable, llmAvailable: res.llmConfigured });
  // The agent searches what POST /v2/search answers from (the own index needs no provider, so search is always there).
  const searchProvider = createSearchProvider(db, searchEnvOf(env));
  const search: WebSearch = deploymentSearch(searchProvider);
  const agentTools = async () => ({ search: !!search, browser: await res.browserAvailable().catch(() => false) });
  switch (queue) {
    case TaskQueues.control:
      return {
        ...(res.workflows ?? { workflowsPath: require.resolve('@wds/workflows') }),
        activities: {
          ...createStoreActivities({ db }),
          ...createCrawlControlActivities({ db }),
          ...createExtractControlActivities({ db }),
          ...createAgentControlActivities({ db, tools: agentTools }),
          ...createCatalogControlActivities({ db }),
          ...createMonitorControlActivities({ db, jitterMs: env.WDS_MONITOR_JITTER_MS }),
          ...createInteractControlActivities({ db }),
          // For scrapes started with WDS_SCRAPE_FETCH=local, which fetch as local activities here
          // (converting on the transform threads when this process also serves wds-fetch, else inline).
          ...scrapeActivities(),
        },
        maxConcurrentActivityTaskExecutions: 50,
      };
    case TaskQueues.fetch:
      return {
        activities: {
          ...scrapeActivities(),
          ...createCrawlActivities({ ...pageDeps, browserAvailable: res.browserAvailable }),
          ...createMapActivities({ ...pageDeps, sharedSearchIndex: env.WDS_SEARCH_SHARED_INDEX }),
          ...createExtractFetchActivities({ ...pageDeps, search }),
          ...createMonitorFetchActivities({ ...pageDeps, search, llmAvailable: !!res.llmConfigured }),
          ...createParseActivities({ db }),
          ...createAgentFetchActivities({ ...pageDeps, search, browserAvailable: res.browserAvailable }),
          ...createCatalogFetchActivities({ ...pageDeps, search: searchProvider, sharedSearchIndex: env.WDS_SEARCH_SHARED_INDEX }),
        },
        maxConcurrentActivityTaskExecutions: env.WDS_FETCH_CONCURRENCY,
      };
    case TaskQueues.browser: {
      if (!res.browser) return null;
      // Every render takes its origin's politeness slot (as every fetchPage does).
      const renderer = gatedRenderer(res.browser.pool);
      return {
        activities: {
          ...createBrowserActivities({ ...pageDeps, renderer, files: res.browser.files, llmAvailable: res.llmConfigured, interact: res.browser.interact.keeper }),
          // Crawl and batch pages: one page per activity, so these slots are the pool's pages too.
          // No llmAvailable: their model work runs in the job's LLM window, as for HTTP pages.
          ...createCrawlBrowserActivities({ ...pageDeps, renderer, files: res.browser.files }),
          ...createAgentBrowserActivities({ ...pageDeps, renderer }),
          ...createInteractReplayActivities(interactDeps(res.browser, pageDeps)),
        },
        // The pool's pages and half as many again (browserActivitySlots): no page idles while an
        // activity claims or stores, and few tasks wait here that another browser worker could start.
        maxConcurrentActivityTaskExecutions: browserActivitySlots(env),
      };
    }
    case TaskQueues.media:
      if (!res.media) return null;
      return {
        activities: createMediaActivities({
          db,
          files: res.media.files,
          tools: res.media.tools,
          proxy: res.media.proxy,
          allowPrivateNetwork: env.WDS_ALLOW_PRIVATE_NETWORK,
          maxBytes: env.WDS_MEDIA_MAX_BYTES,
          urlTtlSeconds: Math.min(env.WDS_FILE_URL_TTL_SECONDS, MEDIA_URL_TTL_SECONDS),
          llmAvailable: res.llmConfigured,
        }),
        // Each step downloads and runs ffmpeg (a core while it encodes): few at once.
        maxConcurrentActivityTaskExecutions: env.WDS_MEDIA_CONCURRENCY,
      };
    case TaskQueues.llm: {
      if (!res.llm) return null;
      const tokens = createTokenBudget(db, env.WDS_LLM_TOKENS_PER_MINUTE);
      const agentModels = agentModelsOf(env.WDS_AGENT_MODELS);
      return {
        activities: {
          ...createLlmActivities({ db, client: res.llm, tokens }),
          // Crawl and batch pages: LLM batches run one page at a time, so a slot is one model step here too.
          ...createExtractLlmActivities({ db, client: res.llm }),
          ...createCrawlLlmActivities({ db, client: res.llm, tokens, pagePatienceMs: env.WDS_LLM_PAGE_PATIENCE_MS }),
          ...createAgentLlmActivities({ db, client: res.llm, tools: { search: !!search, browser: true }, modelFor: (name) => agentModels[name] }),
          // Monitor check pages: json mode's extraction and the goal judge, one page at a time as crawl pages.
          ...createMonitorLlmActivities({ db, client: res.llm, tokens, pagePatienceMs: env.WDS_LLM_PAGE_PATIENCE_MS }),
          ...createInteractLlmActivities({ db, client: res.llm }),
        },
        // Model calls wait on the provider, not on this process: the slots bound what one worker
        // asks of the provider at once, and the task queue's rate (shared by every worker, enforced
        // by the Temporal server) bounds the deployment's requests per minute.
        maxConcurrentActivityTaskExecutions: env.WDS_LLM_CONCURRENCY,
        ...(env.WDS_LLM_REQUESTS_PER_MINUTE ? { maxTaskQueueActivitiesPerSecond: env.WDS_LLM_REQUESTS_PER_MINUTE / 60 } : {}),
      };
    }
    default:
      return null;
  }
}

function interactDeps(browser: NonNullable<QueueResources['browser']>, pageDeps: { db: Db; allowPrivateNetwork: boolean }) {
  const { queue, sessions, engine } = browser.interact;
  return { db: pageDeps.db, allowPrivateNetwork: pageDeps.allowPrivateNetwork, renderer: gatedRenderer(browser.pool), sessions, queue, engine };
}

/**
 * The worker's own queue (browser workers only): the interact calls about the pages this process
 * holds. As many slots as sessions it may hold (each runs one call at a time).
 */
export function sessionQueueOptions(env: WorkerEnv, res: QueueResources): (Omit<WorkerOptions, 'connection' | 'namespace'> & { taskQueue: string }) | null {
  if (!res.browser) return null;
  return {
    taskQueue: res.browser.interact.queue,
    activities: { ...createInteractSessionActivities(interactDeps(res.browser, { db: res.db, allowPrivateNetwork: env.WDS_ALLOW_PRIVATE_NETWORK })) },
    maxConcurrentActivityTaskExecutions: env.WDS_INTERACT_SESSIONS * 2,
  };
}
