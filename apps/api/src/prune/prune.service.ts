import { Injectable } from '@nestjs/common';
import { PruneSession } from '@app/use-cases';
import { sessionNotFound } from '../sessions/session-state';
import { PruneScheduler } from './prune-scheduler';
import { PruneRequestDto } from './prune.dto';

/**
 * `POST .../prune`: with `wait`, the worker's use case runs in this process
 * (same code, same lock and re-check, so it is as idempotent as the job and
 * works without Redis); without, a job is queued now.
 */
@Injectable()
export class PruneService {
  constructor(
    private readonly pruneSession: PruneSession,
    private readonly scheduler: PruneScheduler,
  ) {}

  async prune(tenantId: string, sessionId: string, dto: PruneRequestDto | undefined) {
    if (dto?.wait) {
      const report = await this.pruneSession.run({ tenantId, sessionId });
      if (!report) throw sessionNotFound(sessionId);
      return { status: 200, body: report };
    }
    const queued = await this.scheduler.now(tenantId, sessionId);
    if (!queued) throw sessionNotFound(sessionId);
    return { status: 202, body: { sessionId, headSeq: queued.headSeq, queued: true, jobId: queued.jobId } };
  }
}
