/**
 * The jobs a transform thread runs, shared by the pool (which sends them) and the thread entry
 * (which runs them): HTML → formats, and the escalation test on the same HTML.
 */
import type { SerializedWdsError } from '@wds/errors';
import { looksClientRendered } from './heuristics';
import { transformHtml } from './transform';
import type { TransformOptions, TransformResult } from './types';

export type TransformJob =
  | { id: number; kind: 'transform'; html: string; baseUrl: string; opts: TransformOptions }
  | { id: number; kind: 'clientRendered'; html: string };
/** A job before the pool numbers it. */
export type JobInput = TransformJob extends infer J ? (J extends TransformJob ? Omit<J, 'id'> : never) : never;
/** What each kind of job answers. */
export interface JobOutput {
  transform: TransformResult;
  clientRendered: boolean;
}
export type TransformReply = { id: number; result: JobOutput[keyof JobOutput] } | { id: number; error: SerializedWdsError };

export function runTransformJob(job: JobInput): JobOutput[keyof JobOutput] {
  return job.kind === 'clientRendered' ? looksClientRendered(job.html) : transformHtml(job.html, job.baseUrl, job.opts);
}
