/**
 * Where interact code runs: a page of its own BrowserContext on the session's browser — a
 * Chromium renderer process, not Node. The context is offline and every request it would make is
 * aborted, so the code reaches nothing on its own; its only way out is the bridge binding
 * (bridge.ts), which acts on the session's page through the table of allowed Playwright calls.
 * The code never sees the worker's process, files or environment, and the page's traffic stays
 * behind the session's SSRF proxy.
 *
 * The code runs as the body of an async function handed to the sandbox's runner (prepare-code.ts):
 * top-level `await` works and the value of its last expression is the result. Its result,
 * exception and console output are made text and bounded in the sandbox; only that crosses CDP
 * into the worker. A call that outlives its timeout is terminated (`Runtime.terminateExecution`
 * stops even a busy loop) and the sandbox is discarded, so none of its pending work reaches the
 * next call.
 */
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { browserCrashedError } from '../errors';
import { contextProxy } from '../proxy';
import { bounded } from '../deadline';
import type { Bridge, BridgeAnswer } from './bridge';
import { prepareCode } from './prepare-code';
import { SANDBOX_PRELUDE } from './sandbox-script';

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
      await sb.evaluate(SANDBOX_PRELUDE);
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
    const prepared = prepareCode(code);
    if ('syntaxError' in prepared) return { result: null, error: prepared.syntaxError, killed: false, stdout: '', stderr: '', truncated: false };
    this.bridge = bridge;
    try {
      await this.evaluate(`__wdsBegin(${JSON.stringify(begin)})`);
      const evaluating = this.evaluate(prepared.expression).then(
        (r) => ({ r }),
        () => ({ crashed: true as const }),
      );
      const first = await Promise.race([evaluating, stop.then(() => null)]);
      if (!first) {
        bridge.close();
        await this.terminate();
        return { ...(await this.output()), result: null, error: undefined, killed: true };
      }
      if ('crashed' in first) {
        // The sandbox's renderer died (the code exhausted its memory…): the code failed, the session's page did not.
        return { result: null, error: 'Error: the code sandbox crashed (out of memory?)', killed: false, stdout: '', stderr: '', truncated: false };
      }
      const output = await this.output();
      // The runner catches what the code throws; an exception here is one V8 found compiling it.
      if (first.r.exceptionDetails) return { ...output, result: null, error: exceptionText(first.r.exceptionDetails), killed: false };
      return { ...output, killed: false };
    } finally {
      bridge.close();
      this.bridge = undefined;
      if (this.broken) void this.close();
      else await this.cdp?.send('Runtime.releaseObjectGroup', { objectGroup: 'wds' }).catch(() => {});
    }
  }

  /** Evaluates our own expression in the sandbox (the code only ever inside `__wdsRun`, whose promise resolves to undefined). */
  private async evaluate(expression: string): Promise<EvaluateResult> {
    if (!this.cdp) throw browserCrashedError('the code sandbox is closed');
    try {
      return (await this.cdp.send('Runtime.evaluate', {
        expression,
        awaitPromise: true,
        objectGroup: 'wds',
        userGesture: true,
      })) as EvaluateResult;
    } catch (e) {
      this.broken = true;
      throw browserCrashedError('the code sandbox stopped (it crashed or ran out of memory)', e);
    }
  }

  /** Output, result and exception of the current call, bounded in the sandbox (after a kill, what it still answers within a second, or nothing). */
  private async output(): Promise<Omit<SandboxOutcome, 'killed'>> {
    const reading = this.cdp?.send('Runtime.evaluate', { expression: '__wdsOutput()', returnByValue: true }).catch(() => null);
    let timer: NodeJS.Timeout | undefined;
    const r = (await Promise.race([reading, new Promise<null>((res) => (timer = setTimeout(() => res(null), 1_000)))])) as EvaluateResult | null;
    clearTimeout(timer);
    const v = r?.result.value as Partial<Omit<SandboxOutcome, 'killed'>> | undefined;
    return {
      result: typeof v?.result === 'string' ? v.result : null,
      ...(typeof v?.error === 'string' ? { error: v.error } : {}),
      stdout: v?.stdout ?? '',
      stderr: v?.stderr ?? '',
      truncated: !!v?.truncated,
    };
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

function exceptionText(d: NonNullable<EvaluateResult['exceptionDetails']>): string {
  const ex = d.exception;
  const text = ex?.description ?? (ex?.value !== undefined ? String(ex.value) : undefined) ?? d.text ?? 'Uncaught exception';
  return text.slice(0, 10_000);
}
