import { Injectable } from '@nestjs/common';
import { Job, UnrecoverableError } from 'bullmq';
import { Database } from '@app/database';
import { settlePruneTriggers } from '@app/event-store';
import { PruneSession } from '@app/use-cases';
import { JobName, PruneJobData } from '@app/queue';
import { SessionRetention } from './session-retention';
import { SearchIndexing } from './search-indexing';
import { ToolOutputGc } from './tool-output-gc';

/** Routes maintenance jobs to their use case by name. */
@Injectable()
export class MaintenanceProcessor {
  constructor(
    private readonly db: Database,
    private readonly toolOutputGc: ToolOutputGc,
    private readonly pruneSession: PruneSession,
    private readonly retention: SessionRetention,
    private readonly search: SearchIndexing,
  ) {}

  async process(job: Job<PruneJobData>, signal?: AbortSignal): Promise<unknown> {
    switch (job.name as JobName) {
      case JobName.ToolOutputGc:
        return this.toolOutputGc.run();
      case JobName.Prune:
        return this.prune(job.data, signal);
      case JobName.SessionRetention:
        return this.retention.run(signal);
      case JobName.SearchSweep:
        return { enqueued: await this.search.sweep() };
      default:
        throw new UnrecoverableError(`unknown job ${job.name}`);
    }
  }

  /**
   * A run covers every trigger of the session up to the head it read (those
   * folded into it included), so it settles them: the reconciler stops
   * looking. A deleted session leaves nothing to do: the job completes
   * rather than retries, and settles all of them.
   */
  private async prune(data: PruneJobData, signal?: AbortSignal): Promise<unknown> {
    const report = await this.pruneSession.run(data, { signal });
    await this.db.tenantTx(data.tenantId, (tx) => settlePruneTriggers(tx, data.sessionId, report?.headSeq ?? null));
    return report ?? { sessionId: data.sessionId, outcome: 'session_not_found' };
  }
}
