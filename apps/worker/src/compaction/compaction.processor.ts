import { Injectable } from '@nestjs/common';
import { Job, UnrecoverableError } from 'bullmq';
import { CompactJobData, JobName } from '@app/queue';
import { CompactOutcome, CompactSession } from './compact-session';

/** Translates a `compact` job into the use case: ids from the job data, and whether this is its last attempt. */
@Injectable()
export class CompactionProcessor {
  constructor(private readonly compactSession: CompactSession) {}

  async process(job: Job<CompactJobData>, signal?: AbortSignal): Promise<CompactOutcome> {
    if (job.name !== JobName.Compact) throw new UnrecoverableError(`unknown job ${job.name}`);
    const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    return this.compactSession.run(job.data, { signal, finalAttempt });
  }
}
