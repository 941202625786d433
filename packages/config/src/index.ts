import { z } from 'zod';

/**
 * Env parsing shared by every app. Each app's env.ts declares its schema with these
 * helpers and calls loadEnv once; nothing else reads process.env.
 */
export class ConfigError extends Error {
  constructor(readonly variable: string, reason: string) {
    super(`Invalid configuration: ${variable} ${reason}`);
    this.name = 'ConfigError';
  }
}

export const envBool = (def: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
    .optional()
    .transform((v) => (v === undefined || v === '' ? def : v === 'true' || v === '1' || v === 'yes'));

export const envInt = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return def;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `must be an integer between ${min} and ${max}` });
        return z.NEVER;
      }
      return n;
    });

export function envStr(def: string): z.ZodPipe<z.ZodOptional<z.ZodString>, z.ZodTransform<string, string | undefined>>;
export function envStr(): z.ZodPipe<z.ZodOptional<z.ZodString>, z.ZodTransform<string | undefined, string | undefined>>;
export function envStr(def?: string) {
  return z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === '' ? def : v));
}

export const envUrl = () =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return undefined;
      try {
        new URL(v);
        return v;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a URL' });
        return z.NEVER;
      }
    });

/** Log levels every process accepts in LOG_LEVEL (pino's), any case. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

export const envLogLevel = (def: (typeof LOG_LEVELS)[number]) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const l = (v ?? '').trim().toLowerCase() || def;
      if (!(LOG_LEVELS as readonly string[]).includes(l)) {
        ctx.addIssue({ code: 'custom', message: `must be one of ${LOG_LEVELS.join(', ')}` });
        return z.NEVER;
      }
      return l as (typeof LOG_LEVELS)[number];
    });

/** A rejected value is echoed in the error, unless the variable holds a credential. */
function shownValue(variable: string, value: string | undefined): string {
  if (value === undefined) return 'null';
  if (/SECRET|PASSWORD|TOKEN|KEY/i.test(variable)) return '(hidden)';
  return JSON.stringify(value.replace(/\/\/[^/@\s]*@/, '//***@'));
}

/** Parses `source` with `shape`; the first bad variable becomes one ConfigError naming it. */
export function loadEnv<S extends z.ZodRawShape>(
  shape: S,
  source: Record<string, string | undefined> = process.env,
): z.infer<z.ZodObject<S>> {
  const result = z.object(shape).safeParse(source);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const variable = String(issue.path[0] ?? 'environment');
    throw new ConfigError(variable, `${issue.message} (got ${shownValue(variable, source[variable])})`);
  }
  return result.data;
}

/** For entry points: print one clear line and exit non-zero on bad configuration. */
export function exitOnConfigError(e: unknown): never {
  if (e instanceof ConfigError) {
    process.stderr.write(`${e.message}\n`);
    process.exit(78);
  }
  throw e;
}

export { z };
