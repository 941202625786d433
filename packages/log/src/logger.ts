import { pino, type DestinationStream, type Logger as PinoLogger, type LoggerOptions } from 'pino';
import { redactValue, scrubString } from './redact';

export type Logger = PinoLogger;
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerInit {
  /** The process: `api`, `worker`, `server`, … (the `name` field of every line). */
  name: string;
  level: LogLevel;
  /** Default: stdout, written synchronously (a crash loses no line). */
  destination?: DestinationStream;
  /** Where lines go when no destination is given: stdout (processes) or stderr (CLIs whose stdout is their output). */
  to?: 'stdout' | 'stderr';
}

/** The ids a line may carry; undefined ones are left out. */
export interface LogIds {
  jobId?: string;
  scrapeId?: string;
  teamId?: string;
  workflowId?: string;
}

/** An object with its credentials removed; an Error as `{ err }`. */
function safeObject(o: unknown): Record<string, unknown> {
  if (o instanceof Error) return { err: redactValue(o) };
  return redactValue(o) as Record<string, unknown>;
}

/**
 * Everything a log call receives is redacted before pino sees it (pino's own `redact` option
 * knows only fixed paths; credentials here arrive at any depth, inside errors, and inside
 * strings). Child bindings are redacted too.
 */
const options = (init: LoggerInit): LoggerOptions => ({
  name: init.name,
  level: init.level,
  base: { pid: process.pid },
  timestamp: pino.stdTimeFunctions.isoTime,
  // `"level":"warn"` rather than 40: readable without a lookup table, and what log pipelines parse.
  formatters: {
    level: (label) => ({ level: label }),
    bindings: (b) => safeObject(b),
  },
  // Errors are already plain objects here (pino's serializer would call them `Object`).
  serializers: { err: (e: unknown) => e, error: (e: unknown) => e },
  hooks: {
    logMethod(args, method) {
      const out: unknown[] = [...args];
      if (out.length && typeof out[0] === 'object' && out[0] !== null) {
        const first = out[0];
        out[0] = safeObject(first);
        // pino would take the message from the raw error: take it from the redacted one.
        const err = (out[0] as { err?: { message?: unknown } }).err;
        if (typeof out[1] !== 'string' && err && typeof err.message === 'string') out.splice(1, 0, err.message);
      }
      for (let i = 0; i < out.length; i++) {
        if (typeof out[i] === 'string') out[i] = scrubString(out[i] as string);
        else if (i > 0 && typeof out[i] === 'object' && out[i] !== null) out[i] = redactValue(out[i]);
      }
      return method.apply(this, out as Parameters<typeof method>);
    },
  },
});

export function createLogger(init: LoggerInit): Logger {
  const root = pino(options(init), init.destination ?? pino.destination({ dest: init.to === 'stderr' ? 2 : 1, sync: true }));
  // pino applies formatters.bindings to the root only; children (Object.create of their parent)
  // inherit this override, so bindings given to any child are redacted too.
  const child = root.child;
  root.child = function (this: Logger, bindings, opts) {
    return child.call(this, safeObject(bindings), opts);
  } as typeof root.child;
  return root;
}

/** A child logger whose every line carries these ids. */
export function withIds(log: Logger, ids: LogIds): Logger {
  const b: Record<string, string> = {};
  for (const [k, v] of Object.entries(ids)) if (typeof v === 'string' && v) b[k] = v;
  return log.child(b);
}

/**
 * A lifecycle line (listening, serving) written at info whatever the level: launchers and
 * supervisors wait for it, so LOG_LEVEL=warn must not hide it.
 */
export function announce(log: Logger, fields: Record<string, unknown>, msg: string): void {
  (log.isLevelEnabled('info') ? log : log.child({}, { level: 'info' })).info(fields, msg);
}

/** LOG_LEVEL as given (any case), or an error message naming the accepted values. */
export function parseLogLevel(raw: string): LogLevel | null {
  const l = raw.trim().toLowerCase();
  return (LOG_LEVELS as readonly string[]).includes(l) ? (l as LogLevel) : null;
}
