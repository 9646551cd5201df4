import { Injectable, Logger } from '@nestjs/common';
import { Job, UnrecoverableError } from 'bullmq';
import { JobName, SessionJobData } from '@app/queue';

/** Routes maintenance jobs to their use case by name. */
@Injectable()
export class MaintenanceProcessor {
  private readonly logger = new Logger(MaintenanceProcessor.name);

  async process(job: Job<SessionJobData>): Promise<unknown> {
    switch (job.name as JobName) {
      case JobName.Noop:
        this.logger.debug(`noop for session ${job.data.sessionId}`);
        return { ok: true };
      default:
        throw new UnrecoverableError(`unknown job ${job.name}`);
    }
  }
}
