import { Context } from '@temporalio/activity';
import type { ParseOptions } from '@wds/contracts';
import { completeParseJob, failParseJob, loadParseJob, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';
import type { JobRef, RecordFailureInput } from '@wds/workflows/common';
import type { ParseWorkflowResult, ParseActivities } from '@wds/workflows/parse';
import { asActivity } from '../failures';
import { convertUpload } from './convert';

export interface ParseActivityDeps {
  db: Db;
}

/** POST /v2/parse on a worker: read the upload from Postgres, convert it, write the document back. */
export function createParseActivities(deps: ParseActivityDeps): ParseActivities {
  return {
    parseUpload: ({ jobId }: JobRef): Promise<ParseWorkflowResult> =>
      asActivity(async () => {
        const job = await loadParseJob(deps.db, jobId);
        if (!job) throw new WdsError('NOT_FOUND', { message: `Parse job ${jobId} not found` });
        // A retry after the write succeeded but the completion was lost: nothing to redo.
        if (job.status === 'completed') return { jobId, creditsUsed: job.creditsUsed };
        if (!job.upload) throw new WdsError('CONFLICT', { message: `Parse job ${jobId} has already ended` });
        const options = job.options as ParseOptions;
        const { document, creditsUsed } = await convertUpload({
          bytes: job.upload,
          jobId,
          filename: job.filename,
          contentType: job.contentType,
          options,
          timeoutMs: options.timeout,
          signal: Context.current().cancellationSignal,
        });
        await completeParseJob(deps.db, jobId, document, creditsUsed);
        return { jobId, creditsUsed };
      }),
    recordParseFailure: ({ jobId, error }: RecordFailureInput) => asActivity(() => failParseJob(deps.db, jobId, error)),
  };
}
