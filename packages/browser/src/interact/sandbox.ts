/**
 * Where interact code runs: a page of its own BrowserContext on the session's browser — a
 * Chromium renderer process, not Node. The context is offline and every request it would make is
 * aborted, so the code reaches nothing on its own; its only way out is the bridge binding
 * (bridge.ts), which acts on the session's page through the table of allowed Playwright calls.
 * The code never sees the worker's process, files or environment, and the page's traffic stays
 * behind the session's SSRF proxy.
 *
 * The code is evaluated through CDP (`Runtime.evaluate` in REPL mode, as DevTools' console does):
 * top-level `await` works and the value of its last expression is the result. A call that
 * outlives its timeout is terminated (`Runtime.terminateExecution` stops even a busy loop) and
 * the sandbox is discarded, so none of its pending work reaches the next call.
 */
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { browserCrashedError } from '../errors';
import { contextProxy } from '../proxy';
import { bounded } from '../render-job';
import type { Bridge, BridgeAnswer } from './bridge';
import { OUTPUT_LIMIT, SANDBOX_PRELUDE } from './sandbox-script';

/** What the sandbox needs from the pool. */
export interface SandboxHost {
  contextTimeoutMs: number;
  onHung(): void;
  /** A proxy server URL that refuses every connection. */
  proxy: string;
}

/** What one evaluation produced. */
export interface SandboxOutcome {
  /** The last expression's value as text (strings as they are, other values as JSON); null for undefined. */
  result: string | null;
  /** The uncaught exception, as `Error: message` plus its stack inside the code. */
  error?: string;
  stdout: string;
  stderr: string;
  truncated: boolean;
  /** The timeout ended the code. */
  killed: boolean;
}

interface RemoteObject {
  type: string;
  subtype?: string;
  value?: unknown;
  unserializableValue?: string;
  description?: string;
  objectId?: string;
}
interface EvaluateResult {
  result: RemoteObject;
  exceptionDetails?: { text?: string; exception?: RemoteObject };
}

const TO_TEXT = `function () {
  try { const s = JSON.stringify(this); return s === undefined ? String(this) : s; } catch (e) { return String(this); }
}`;

export class Sandbox {
  private bridge?: Bridge;
  private closing?: Promise<void>;
  /** Set when the sandbox cannot be used again (timed out, crashed, closed). */
  broken = false;

  private constructor(
    private readonly context: BrowserContext,
    private page: Page | undefined,
    private cdp: CDPSession | undefined,
  ) {}

  /**
   * A fresh sandbox on `context`'s browser; creating it is bounded like a render's context (a hung
   * browser is killed). Its network is shut three ways: `offline` and an abort-everything route
   * stop what goes through Chromium's request pipeline, and `host.proxy` (a PolicyProxy that
   * refuses every host, loopback not bypassed) takes every socket the context opens otherwise —
   * WebRTC's TURN over TCP and TLS ignores the first two and connects anywhere without it.
   */
  static async open(source: BrowserContext, host: SandboxHost): Promise<Sandbox> {
    const browser = source.browser();
    if (!browser) throw browserCrashedError('the session has no browser');
    const options = { offline: true, serviceWorkers: 'block' as const, acceptDownloads: false, proxy: contextProxy(host.proxy) };
    const context = await bounded(browser.newContext(options), host.contextTimeoutMs, host.onHung);
    const sb = new Sandbox(context, undefined, undefined);
    try {
      await context.route('**/*', (r) => r.abort('blockedbyclient').catch(() => {}));
      await context.exposeBinding('__wdsBridge', (src, payload: unknown) => sb.onCall(src.page, payload));
      const page = await context.newPage();
      sb.page = page;
      context.on('page', (p) => void (p !== page && p.close().catch(() => {})));
      page.on('crash', () => (sb.broken = true));
      page.on('close', () => (sb.broken = true));
      sb.cdp = await context.newCDPSession(page);
      await sb.evaluate(SANDBOX_PRELUDE, false);
      return sb;
    } catch (e) {
      await sb.close();
      throw e;
    }
  }

  private onCall(from: Page, payload: unknown): Promise<BridgeAnswer> {
    if (from !== this.page || !this.bridge) return Promise.reject(new Error('no interaction is running'));
    return this.bridge.dispatch(payload);
  }

  /** Runs `code` with `bridge` as its page; resolves when it settles or `stop` fires (then `killed`). */
  async run(code: string, bridge: Bridge, begin: { url: string; viewport: unknown }, stop: Promise<unknown>): Promise<SandboxOutcome> {
    this.bridge = bridge;
    try {
      await this.evaluate(`globalThis.__wdsBegin(${JSON.stringify(begin)})`, false);
      const evaluating = this.evaluate(code, true).then(
        (r) => ({ r }),
        () => ({ crashed: true as const }),
      );
      const first = await Promise.race([evaluating, stop.then(() => null)]);
      if (!first) {
        bridge.close();
        await this.terminate();
        return { result: null, killed: true, ...(await this.output()) };
      }
      if ('crashed' in first) {
        // The sandbox's renderer died (the code exhausted its memory…): the code failed, the session's page did not.
        return { result: null, error: 'Error: the code sandbox crashed (out of memory?)', killed: false, stdout: '', stderr: '', truncated: false };
      }
      const { r } = first;
      const output = await this.output();
      if (r.exceptionDetails) return { result: null, error: exceptionText(r.exceptionDetails), killed: false, ...output };
      return { result: await this.text(r.result), killed: false, ...output };
    } finally {
      bridge.close();
      this.bridge = undefined;
      if (this.broken) void this.close();
      else await this.cdp?.send('Runtime.releaseObjectGroup', { objectGroup: 'wds' }).catch(() => {});
    }
  }

  private async evaluate(expression: string, repl: boolean): Promise<EvaluateResult> {
    if (!this.cdp) throw browserCrashedError('the code sandbox is closed');
    try {
      return (await this.cdp.send('Runtime.evaluate', {
        expression,
        replMode: repl,
        awaitPromise: true,
        objectGroup: 'wds',
        userGesture: true,
      })) as EvaluateResult;
    } catch (e) {
      this.broken = true;
      throw browserCrashedError('the code sandbox stopped (it crashed or ran out of memory)', e);
    }
  }

  /** Console output of the current call (after a kill, what the sandbox still answers within a second, or nothing). */
  private async output(): Promise<{ stdout: string; stderr: string; truncated: boolean }> {
    const reading = this.cdp?.send('Runtime.evaluate', { expression: 'globalThis.__wdsOutput()', returnByValue: true }).catch(() => null);
    let timer: NodeJS.Timeout | undefined;
    const r = (await Promise.race([reading, new Promise<null>((res) => (timer = setTimeout(() => res(null), 1_000)))])) as EvaluateResult | null;
    clearTimeout(timer);
    const v = r?.result.value as { stdout?: string; stderr?: string; truncated?: boolean } | undefined;
    return { stdout: v?.stdout ?? '', stderr: v?.stderr ?? '', truncated: !!v?.truncated };
  }

  private async text(o: RemoteObject): Promise<string | null> {
    if (o.type === 'undefined') return null;
    if (o.type === 'string') return cap(String(o.value));
    if (o.subtype === 'null') return 'null';
    if (o.type === 'object' && o.objectId) {
      const r = (await this.cdp!.send('Runtime.callFunctionOn', { objectId: o.objectId, functionDeclaration: TO_TEXT, returnByValue: true })) as EvaluateResult;
      return cap(String(r.result.value ?? ''));
    }
    if (o.type === 'bigint') return (o.unserializableValue ?? '').replace(/n$/, '');
    if (o.unserializableValue !== undefined) return o.unserializableValue;
    if (o.type === 'number' || o.type === 'boolean') return String(o.value);
    return cap(o.description ?? String(o.value));
  }

  /**
   * Stops running code, even a synchronous loop. The sandbox is discarded after this call's
   * output is read (`run`'s finally), and its pending promises with it.
   */
  private async terminate(): Promise<void> {
    this.broken = true;
    await this.cdp?.send('Runtime.terminateExecution').catch(() => {});
  }

  close(): Promise<void> {
    this.broken = true;
    this.closing ??= this.context.close().catch(() => {});
    return this.closing;
  }
}

function cap(s: string): string {
  return s.length > OUTPUT_LIMIT ? s.slice(0, OUTPUT_LIMIT) : s;
}

function exceptionText(d: NonNullable<EvaluateResult['exceptionDetails']>): string {
  const ex = d.exception;
  const text = ex?.description ?? (ex?.value !== undefined ? String(ex.value) : undefined) ?? d.text ?? 'Uncaught exception';
  return text.slice(0, 10_000);
}
