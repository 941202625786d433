import type { RenderRequest, RenderResult } from '@wds/browser';
import { originGate, type OriginGate, type PolitenessHints } from '@wds/fetch';

/** A render that may say what it adds to its origin's politeness budget; its result says how long it waited. */
export type GatedRenderRequest = RenderRequest & { politeness?: PolitenessHints };
export type GatedRenderResult = RenderResult & { politenessWaitMs?: number };

export interface Renderer {
  render(req: GatedRenderRequest): Promise<GatedRenderResult>;
}

/**
 * The browser engine's side of the politeness gate (fetchPage is the HTTP engine's): every render
 * — scrape jobs, crawl pages, the agent's browser tool, an interact session's first page — takes
 * a slot of its URL's origin for the whole render (the page loads while it holds it), within the
 * render's timeout, and its main document's answer feeds the origin's backoff. Subresources and
 * later navigations of the page take no slot of their own.
 */
export function gatedRenderer(inner: { render(req: RenderRequest): Promise<RenderResult> }, gate: () => OriginGate | null = originGate): Renderer {
  return {
    async render({ politeness, ...req }) {
      const g = gate();
      let url: URL | null = null;
      try {
        url = new URL(req.url);
      } catch {
        // the engine reports an invalid URL itself
      }
      if (!g || !url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return inner.render(req);
      const deadlineMs = Date.now() + req.timeoutMs;
      const ticket = await g.enter(url, { hints: politeness, deadlineMs, signal: req.signal });
      let r: RenderResult;
      try {
        r = await inner.render({ ...req, timeoutMs: Math.max(1, deadlineMs - Date.now()) });
      } catch (e) {
        await ticket.end({ error: e });
        throw e;
      }
      await ticket.end({ status: r.statusCode, headers: r.headers });
      return ticket.waitedMs ? { ...r, politenessWaitMs: ticket.waitedMs } : r;
    },
  };
}
