import type { LogLevel as TemporalLogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/worker';
import type { Logger, LogIds } from '@wds/log';

const LEVELS = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;
/** `scrape-<uuid>`, `crawl-<uuid>`, … (workflowIds in @wds/workflows/contracts). */
const JOB_WORKFLOW = /^([a-z]+)-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** The job ids a workflow id names, so the SDK's lines about a job carry them. */
export function idsOfWorkflow(workflowId: unknown): LogIds {
  if (typeof workflowId !== 'string') return {};
  const m = JOB_WORKFLOW.exec(workflowId);
  if (!m) return { workflowId };
  return m[1] === 'scrape' ? { workflowId, jobId: m[2], scrapeId: m[2] } : { workflowId, jobId: m[2] };
}

/**
 * The Temporal SDK's logger (Runtime.install): its lines (activity and workflow failures,
 * worker state, and Core's, forwarded) become pino lines of this process, redacted like all
 * others. An activity failure's error carries whatever the activity threw.
 */
export class TemporalPinoLogger implements TemporalLogger {
  constructor(private readonly pino: Logger) {}

  log(level: TemporalLogLevel, message: string, meta: LogMetadata = {}): void {
    const l = LEVELS[level] ?? 'info';
    if (!this.pino.isLevelEnabled(l)) return;
    this.pino[l]({ ...meta, ...idsOfWorkflow(meta.workflowId) }, message);
  }
  trace(message: string, meta?: LogMetadata) {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata) {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata) {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata) {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata) {
    this.log('ERROR', message, meta);
  }
}

/** Core (the SDK's Rust side) at the process level, but never chattier than INFO: its debug lines dump task protos. */
export function coreLogFilter(level: string): TemporalLogLevel {
  switch (level) {
    case 'error':
    case 'fatal':
    case 'silent':
      return 'ERROR';
    case 'warn':
      return 'WARN';
    default:
      return 'INFO';
  }
}
