/**
 * The one outcome of a parse: the job's result or failure, the deadline, or the caller's abort,
 * whichever comes first. Later ones are ignored; `settled` tells the job to stop reacting.
 */
export class Outcome<T> {
  settled = false;
  readonly promise: Promise<T>;
  private resolveFn!: (v: T) => void;
  private rejectFn!: (e: unknown) => void;
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort = (): void => this.fail(this.abortError());

  constructor(
    timeoutMs: number,
    private readonly signal: AbortSignal | undefined,
    timeoutError: () => unknown,
    private readonly abortError: () => unknown,
  ) {
    this.promise = new Promise<T>((resolve, reject) => {
      this.resolveFn = resolve;
      this.rejectFn = reject;
    });
    this.timer = setTimeout(() => this.fail(timeoutError()), timeoutMs);
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  resolve(value: T): void {
    this.finish(() => this.resolveFn(value));
  }

  fail(e: unknown): void {
    this.finish(() => this.rejectFn(e));
  }

  private finish(fn: () => void): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this.onAbort);
    fn();
  }
}
