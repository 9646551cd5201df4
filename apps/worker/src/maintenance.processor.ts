import { Injectable, Logger } from '@nestjs/common';
import { Job, UnrecoverableError } from 'bullmq';
import { JobName, SessionJobData } from '@app/queue';
import { PruneSession } from '@app/maintenance';
import { ToolOutputGc } from './tool-output-gc';

/** Routes maintenance jobs to their use case by name. */
@Injectable()
export class MaintenanceProcessor {
  private readonly logger = new Logger(MaintenanceProcessor.name);

  constructor(
    private readonly toolOutputGc: ToolOutputGc,
    private readonly pruneSession: PruneSession,
  ) {}

  async process(job: Job<SessionJobData>, signal?: AbortSignal): Promise<unknown> {
    switch (job.name as JobName) {
      case JobName.Noop:
        this.logger.debug(`noop for session ${job.data.sessionId}`);
        return { ok: true };
      case JobName.ToolOutputGc:
        return this.toolOutputGc.run();
      case JobName.Prune:
        // A deleted session leaves nothing to do: the job completes rather than retries.
        return (await this.pruneSession.run(job.data, { signal })) ?? { sessionId: job.data.sessionId, outcome: 'session_not_found' };
      default:
        throw new UnrecoverableError(`unknown job ${job.name}`);
    }
  }
}
