/** Shapes of a fetch: what is asked, what comes back, and the decoded text of a body. */
import type { PolitenessHints } from './politeness/gate';

export interface FetchRequest {
  url: string;
  headers?: Record<string, string>;
  /** Whole-request budget in ms (DNS + connect + redirects + body). Exceeding it throws REQUEST_TIMEOUT. */
  timeoutMs: number;
  skipTlsVerification: boolean;
  /** When false, loopback/private/link-local/CGNAT/multicast/metadata targets are refused (after DNS and every redirect). */
  allowPrivateNetwork: boolean;
  /** Bodies above this many bytes (after decompression) are refused. */
  maxBodyBytes: number;
  maxRedirects?: number;
  /**
   * Stream the (decoded, capped) body into this file instead of memory: media downloads. The
   * page's `body` is then empty. The file is written only for the final response, after every
   * redirect hop passed the guard.
   */
  saveTo?: string;
  userAgent?: string;
  signal?: AbortSignal;
  /** Called with every URL before it is requested (the first and each redirect hop): throws to refuse it (threat protection). */
  checkUrl?: (url: URL) => void;
  /** What this request adds to its origins' politeness budgets (robots.txt Crawl-delay of a crawl that respects robots). */
  politeness?: PolitenessHints;
}

export interface FetchedPage {
  /** URL as requested. */
  requestedUrl: string;
  /** URL after all redirects. */
  finalUrl: string;
  /** Every URL visited, in order, including requested and final. */
  redirectChain: string[];
  statusCode: number;
  /** Response headers of the final response, lower-cased names. */
  headers: Record<string, string>;
  /** MIME type without parameters, lower case, e.g. "text/html"; "" when absent. */
  contentType: string;
  /** Decompressed body bytes. */
  body: Buffer;
  /** Ms the request waited for its origins' politeness budgets (every hop); absent when it did not wait. */
  politenessWaitMs?: number;
}



export interface DecodedBody {
  text: string;
  /** Charset actually used, lower case (e.g. "utf-8", "shift_jis"). */
  charset: string;
}
