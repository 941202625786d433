import type { V1Wants } from './request';

/**
 * v2 answers → v1 answers. Only successful bodies change; error bodies are v2's
 * `{success:false, error, code?, details?}`, which is also v1's error shape.
 */
type Body = Record<string, unknown>;
type Doc = Record<string, unknown>;

/** Links the v2 controllers build (`…/v2/crawl/<id>?skip=…`) point at the v1 route instead. */
const toV1Url = (u: unknown) => (typeof u === 'string' ? u.replace(/\/v2\/(crawl|batch\/scrape|extract)\//, '/v1/$1/') : u);

/** The `extract` format's result sits in `extract` (v2 puts every model result in `json`). */
export function documentToV1(d: Doc, wants: V1Wants | undefined): Doc {
  if (!wants?.extract || !('json' in d)) return d;
  const { json, ...rest } = d;
  return { ...rest, extract: json };
}

export const v1Answers = {
  scrape(b: Body, wants?: V1Wants): Body {
    return { ...b, data: documentToV1(b.data as Doc, wants) };
  },
  /** Crawl / batch / extract started: the polling URL is v1's. */
  started(b: Body): Body {
    return { ...b, url: toV1Url(b.url) };
  },
  /** v1 clients loop while `next` is in the body, so the last page has none (v2 sends null). */
  status(b: Body): Body {
    const { next, ...rest } = b;
    return next ? { ...rest, next: toV1Url(next) } : rest;
  },
  map(b: Body): Body {
    return { success: b.success, links: (b.links as { url: string }[]).map((l) => l.url) };
  },
  /** v1 search answers one list: the web results (v2 `data.web`). */
  search(b: Body): Body {
    const data = (b.data as { web?: unknown[] }).web ?? [];
    return { success: b.success, data, ...(b.warning ? { warning: b.warning } : {}) };
  },
  creditUsage(b: Body): Body {
    const d = b.data as { remainingCredits: number; planCredits: number; billingPeriodStart: string | null; billingPeriodEnd: string | null };
    return { success: b.success, data: { remaining_credits: d.remainingCredits, plan_credits: d.planCredits, billing_period_start: d.billingPeriodStart, billing_period_end: d.billingPeriodEnd } };
  },
  tokenUsage(b: Body): Body {
    const d = b.data as { remainingTokens: number; planTokens: number; billingPeriodStart: string | null; billingPeriodEnd: string | null };
    return { success: b.success, data: { remaining_tokens: d.remainingTokens, plan_tokens: d.planTokens, billing_period_start: d.billingPeriodStart, billing_period_end: d.billingPeriodEnd } };
  },
};
