/**
 * The live pages one browser worker keeps, by scrape id:
 *
 * - **parked**: a scrape's rendered page, kept so that a first interaction continues from it
 *   instead of replaying the scrape. At most `maxParked`; the least recently used goes first
 *   when a newer one needs room, and each ends after `idleMs` unused.
 * - **live**: the page of an interact session. At most `maxLive` (a session beyond it is
 *   refused, never evicted); one call at a time (`busy`). The session's workflow ends it after its
 *   idle timeout; the store closes one unused for `idleMs + liveGraceMs` anyway (the workflow's
 *   close never came: Temporal or the control workers were away).
 *
 * A page whose renderer or browser dies leaves the store at once. Every end is reported to
 * `onEnd` (the worker writes it to the session's row). No render slot is held by any of them.
 */
import { WdsError } from '@wds/errors';
import type { LivePage } from './live-page';

export type SessionEnd = 'stopped' | 'idle' | 'evicted' | 'gone' | 'shutdown';

export interface StoredPage<M> {
  key: string;
  page: LivePage;
  state: 'parked' | 'live';
  /** Date.now() of the last use (parking, adoption, a call). */
  lastUsed: number;
  busy: boolean;
  meta: M;
}

export interface SessionStoreOptions<M> {
  maxParked: number;
  maxLive: number;
  idleMs: number;
  /** Extra time a live session is given beyond `idleMs` before the store ends it itself. */
  liveGraceMs: number;
  /** Bookkeeping of an end (awaited by `end` and `close`; its failure is ignored). */
  onEnd(s: StoredPage<M>, reason: SessionEnd): void | Promise<void>;
  now?: () => number;
}

export function sessionsFullError(max: number): WdsError {
  return new WdsError('SERVICE_UNAVAILABLE', {
    code: 'BROWSER_SESSIONS_FULL',
    message: `Service Unavailable: this browser worker already holds its ${max} interact sessions; retry when one ends, or run more browser workers (WDS_INTERACT_SESSIONS)`,
  });
}

export class SessionStore<M> {
  private readonly pages = new Map<string, StoredPage<M>>();
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly opts: SessionStoreOptions<M>) {
    this.now = opts.now ?? Date.now;
    this.sweeper = setInterval(() => this.sweep(), Math.max(250, Math.min(10_000, opts.idleMs / 4)));
    this.sweeper.unref();
  }

  get(key: string): StoredPage<M> | undefined {
    return this.pages.get(key);
  }

  stats(): { parked: number; live: number } {
    let live = 0;
    for (const s of this.pages.values()) if (s.state === 'live') live++;
    return { parked: this.pages.size - live, live };
  }

  /** Keeps a scrape's page for a first interaction; false (and the page closed) when none are kept. */
  park(key: string, page: LivePage, meta: M): boolean {
    if (this.opts.maxParked <= 0) {
      void page.close();
      return false;
    }
    void this.end(key, 'evicted');
    const parked = [...this.pages.values()].filter((s) => s.state === 'parked').sort((a, b) => a.lastUsed - b.lastUsed);
    for (const s of parked.slice(0, Math.max(0, parked.length - this.opts.maxParked + 1))) void this.end(s.key, 'evicted');
    this.add({ key, page, state: 'parked', lastUsed: this.now(), busy: false, meta });
    return true;
  }

  /** Whether a new live session fits. */
  hasRoom(): boolean {
    return this.stats().live < this.opts.maxLive;
  }

  /** Throws the 503 a full worker answers (checked before a replay renders its page). */
  assertRoom(): void {
    if (!this.hasRoom()) throw sessionsFullError(this.opts.maxLive);
  }

  /** A parked page becomes a session's page; undefined when it is not here (evicted, expired, gone). */
  adopt(key: string, meta: M): StoredPage<M> | undefined {
    const s = this.pages.get(key);
    if (!s || s.page.gone) return undefined;
    if (s.state === 'live') return s;
    if (!this.hasRoom()) throw sessionsFullError(this.opts.maxLive);
    s.state = 'live';
    s.meta = meta;
    s.lastUsed = this.now();
    return s;
  }

  /** A page rendered for a session (a replay). */
  open(key: string, page: LivePage, meta: M): StoredPage<M> {
    void this.end(key, 'evicted');
    if (!this.hasRoom()) {
      void page.close();
      throw sessionsFullError(this.opts.maxLive);
    }
    const s: StoredPage<M> = { key, page, state: 'live', lastUsed: this.now(), busy: false, meta };
    this.add(s);
    return s;
  }

  touch(s: StoredPage<M>): void {
    s.lastUsed = this.now();
  }

  /** Removes and closes the page; `onEnd` hears why. Undefined when it was not here. */
  async end(key: string, reason: SessionEnd): Promise<StoredPage<M> | undefined> {
    const s = this.pages.get(key);
    if (!s) return undefined;
    this.pages.delete(key);
    await Promise.all([this.report(s, reason), s.page.close()]);
    return s;
  }

  /** Ends what has been unused too long (runs on a timer; callable by tests). */
  sweep(): void {
    const t = this.now();
    for (const s of [...this.pages.values()]) {
      const limit = s.state === 'live' ? this.opts.idleMs + this.opts.liveGraceMs : this.opts.idleMs;
      if (!s.busy && t - s.lastUsed >= limit) void this.end(s.key, 'idle');
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.pages.keys()].map((k) => this.end(k, 'shutdown')));
  }

  private add(s: StoredPage<M>): void {
    this.pages.set(s.key, s);
    void s.page.whenGone().then(() => {
      if (this.pages.get(s.key) !== s) return;
      this.pages.delete(s.key);
      void this.report(s, 'gone');
    });
  }

  private async report(s: StoredPage<M>, reason: SessionEnd): Promise<void> {
    try {
      await this.opts.onEnd(s, reason);
    } catch {
      // Bookkeeping only: the page is closed either way.
    }
  }
}
