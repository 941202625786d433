/**
 * The live pages one browser worker keeps, by scrape id:
 *
 * - **parked**: a scrape's rendered page, kept so that a first interaction continues from it
 *   instead of replaying the scrape. At most `maxParked`; the least recently used goes first
 *   when a newer one needs room, and each ends after `idleMs` unused.
 * - **live**: the page of an interact session. At most `maxLive` (a session beyond it is
 *   refused, never evicted), of which one team holds at most `maxLivePerTeam` (below `maxLive`:
 *   no team can take every session of a worker); one call at a time (`busy`). The session's
 *   workflow ends it after its idle timeout or its maximum life; the store closes one unused for
 *   `idleMs + liveGraceMs`, or `liveGraceMs` past its `expiresAt`, anyway (the workflow's close
 *   never came: Temporal or the control workers were away).
 *
 * A page whose renderer or browser dies leaves the store at once. Every end is reported to
 * `onEnd` (the worker writes it to the session's row). No render slot is held by any of them.
 */
import { WdsError } from '@wds/errors';
import type { LivePage } from './live-page';

export type SessionEnd = 'stopped' | 'idle' | 'expired' | 'evicted' | 'gone' | 'shutdown';

export interface StoredPage<M> {
  key: string;
  page: LivePage;
  state: 'parked' | 'live';
  /** Date.now() of the last use (parking, adoption, a call). */
  lastUsed: number;
  busy: boolean;
  meta: M;
  /** Date.now() at which a live session's maximum life ends (its workflow closes it then). */
  expiresAt?: number;
}

export interface SessionStoreOptions<M> {
  maxParked: number;
  maxLive: number;
  /** Live sessions one team may hold (`teamOf`); default `maxLive`. */
  maxLivePerTeam?: number;
  teamOf?: (meta: M) => string;
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

export function teamShareError(held: number, max: number): WdsError {
  return new WdsError('CONCURRENCY_LIMITED', {
    code: 'INTERACT_SESSIONS_PER_TEAM',
    message: `Concurrency limit reached: your team already holds ${held} of this browser worker's interact sessions, its share (WDS_INTERACT_SESSIONS_PER_TEAM = ${max}); stop one (DELETE /v2/scrape/{id}/interact) or retry when one ends`,
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

  /** Why a new live session of `meta`'s team does not fit (the worker is full: 503, the team holds its share: 429), or undefined. */
  private noRoom(meta?: M): WdsError | undefined {
    const live = [...this.pages.values()].filter((s) => s.state === 'live');
    if (live.length >= this.opts.maxLive) return sessionsFullError(this.opts.maxLive);
    const { teamOf, maxLivePerTeam } = this.opts;
    if (!teamOf || maxLivePerTeam === undefined || meta === undefined) return undefined;
    const team = teamOf(meta);
    const held = live.filter((s) => teamOf(s.meta) === team).length;
    return held >= maxLivePerTeam ? teamShareError(held, maxLivePerTeam) : undefined;
  }

  /** Whether a new live session (of `meta`'s team) fits. */
  hasRoom(meta?: M): boolean {
    return !this.noRoom(meta);
  }

  /** Throws what a full worker, or a team at its share, answers (checked before a replay renders its page). */
  assertRoom(meta?: M): void {
    const e = this.noRoom(meta);
    if (e) throw e;
  }

  /** A parked page becomes a session's page; undefined when it is not here (evicted, expired, gone). */
  adopt(key: string, meta: M, expiresAt?: number): StoredPage<M> | undefined {
    const s = this.pages.get(key);
    if (!s || s.page.gone) return undefined;
    if (s.state === 'live') return s;
    this.assertRoom(meta);
    s.state = 'live';
    s.meta = meta;
    s.lastUsed = this.now();
    s.expiresAt = expiresAt;
    return s;
  }

  /** A page rendered for a session (a replay). */
  open(key: string, page: LivePage, meta: M, expiresAt?: number): StoredPage<M> {
    void this.end(key, 'evicted');
    const full = this.noRoom(meta);
    if (full) {
      void page.close();
      throw full;
    }
    const s: StoredPage<M> = { key, page, state: 'live', lastUsed: this.now(), busy: false, meta, expiresAt };
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

  /** Ends what has been unused too long, and live sessions past their life (runs on a timer; callable by tests). */
  sweep(): void {
    const t = this.now();
    for (const s of [...this.pages.values()]) {
      if (s.busy) continue;
      const limit = s.state === 'live' ? this.opts.idleMs + this.opts.liveGraceMs : this.opts.idleMs;
      if (t - s.lastUsed >= limit) void this.end(s.key, 'idle');
      else if (s.state === 'live' && s.expiresAt !== undefined && t >= s.expiresAt + this.opts.liveGraceMs) void this.end(s.key, 'expired');
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
