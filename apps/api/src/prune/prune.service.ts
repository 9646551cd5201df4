import { Injectable } from '@nestjs/common';
import { Database } from '@app/database';
import { DomainError } from '@app/domain';
import { findSession } from '@app/event-store';
import { PruneSession } from '@app/maintenance';
import { sessionNotFound } from '../sessions/session-view';
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
    private readonly db: Database,
    private readonly pruneSession: PruneSession,
    private readonly scheduler: PruneScheduler,
  ) {}

  async prune(tenantId: string, sessionId: string, dto: PruneRequestDto | undefined) {
    if (dto?.wait) {
      const report = await this.pruneSession.run({ tenantId, sessionId });
      if (!report) throw sessionNotFound(sessionId);
      return { status: 200, body: report };
    }
    const session = await this.db.tenantTx(tenantId, (tx) => findSession(tx, sessionId));
    if (!session) throw sessionNotFound(sessionId);
    let jobId: string;
    try {
      jobId = await this.scheduler.now(tenantId, sessionId, session.headSeq);
    } catch {
      throw new DomainError('unavailable', 'queue_unavailable', 'The job queue cannot be reached; send {"wait": true} to run the job in this request');
    }
    return { status: 202, body: { sessionId, headSeq: session.headSeq, queued: true, jobId } };
  }
}
