import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database, sqlState } from '@app/database';
import { expiredSessions, idleCutoff, SessionRetentionPolicy } from '@app/domain';
import { archiveSessions, lockIdleSessions, tenantsWithRetention } from '@app/event-store';
import { deleteSessionWithOutputs } from '@app/use-cases';
import { PRODUCER_REDIS, publishInvalidation, RedisClient } from '@app/queue';
import { WorkerMetrics } from './worker-metrics';

/**
 * Runs a batch again when PostgreSQL aborted it as a deadlock victim: two
 * workers whose batches delete sessions that are each other's forks' sources
 * lock the forks in opposite orders. The batch rolled back whole, so running
 * it again is safe.
 */
async function againAfterDeadlock<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts || sqlState(error) !== '40P01') throw error;
    }
  }
}

/** What the retention job reads the time from; a test or a replay can give another. */
export const CLOCK = Symbol('CLOCK');
export type Clock = () => Date;

/** Sessions archived or deleted per transaction, so a large backlog never holds many row locks for long. */
const BATCH = 50;
/** Tenants with a retention setting read per page. */
const TENANT_PAGE = 100;

export interface RetentionReport {
  tenants: number;
  archived: number;
  deleted: number;
}

/**
 * Session retention: for every tenant with a setting, archives or
 * deletes the sessions idle longer than its age, as of one `now` from the
 * clock per run. Run by its job scheduler on the maintenance queue
 * (job-schedules.ts). Each batch locks its sessions with SKIP LOCKED, so
 * workers running at once (or a run overlapping the next) share the work and
 * never act twice on a session, and one being appended to is left for the
 * next run; every statement is idempotent anyway (archiving keeps the first
 * time, a deleted session is gone). Deletes take the API's delete path,
 * tool outputs included; a content it skips is the collector's. Each
 * committed batch tells the API replicas, whose live streams on those
 * sessions end (their cache-invalidation channel).
 */
@Injectable()
export class SessionRetention {
  private readonly logger = new Logger(SessionRetention.name);

  constructor(
    private readonly db: Database,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly metrics: WorkerMetrics,
    @Inject(PRODUCER_REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** One run over every tenant with a setting; an aborted run stops between batches, the next one goes on. */
  async run(signal?: AbortSignal): Promise<RetentionReport> {
    const now = this.clock();
    const report: RetentionReport = { tenants: 0, archived: 0, deleted: 0 };
    let afterTenantId: string | undefined;
    for (;;) {
      const tenants = await this.db.systemTx((tx) => tenantsWithRetention(tx, TENANT_PAGE, afterTenantId));
      for (const { tenantId, policy } of tenants) {
        if (signal?.aborted) return report;
        const { archived, deleted } = await this.retireIdle(tenantId, policy, now, signal);
        report.tenants += 1;
        report.archived += archived;
        report.deleted += deleted;
      }
      if (tenants.length < TENANT_PAGE) break;
      afterTenantId = tenants[tenants.length - 1].tenantId;
    }
    if (report.archived + report.deleted > 0) {
      this.logger.log(`retention: ${report.archived} session(s) archived, ${report.deleted} deleted across ${report.tenants} tenant(s)`);
    }
    return report;
  }

  /** One tenant, walked once by session id in batches of short transactions. */
  private async retireIdle(tenantId: string, policy: SessionRetentionPolicy, now: Date, signal?: AbortSignal) {
    const cutoff = idleCutoff(now, policy);
    const total = { archived: 0, deleted: 0 };
    let afterSessionId = '';
    while (!signal?.aborted) {
      const batch = await againAfterDeadlock(() => this.db.tenantTx(tenantId, async (tx) => {
        const idle = await lockIdleSessions(tx, { cutoff, includeArchived: policy.action === 'delete', afterSessionId, limit: BATCH });
        const decision = expiredSessions(now, policy, idle);
        const archived = await archiveSessions(tx, decision.archive, now);
        const deleted: string[] = [];
        for (const sessionId of decision.delete) if (await deleteSessionWithOutputs(tx, sessionId)) deleted.push(sessionId);
        return { seen: idle.length, last: idle[idle.length - 1]?.sessionId, archived, deleted, retired: [...decision.archive, ...deleted] };
      }));
      if (batch.retired.length > 0) publishInvalidation(this.redis, this.config.redis.namespace, { kind: 'sessions', tenantId, sessionIds: batch.retired });
      // Counted once committed.
      this.metrics.observeRetired('archive', batch.archived);
      this.metrics.observeRetired('delete', batch.deleted.length);
      total.archived += batch.archived;
      total.deleted += batch.deleted.length;
      if (batch.seen < BATCH) break;
      afterSessionId = batch.last!;
    }
    return total;
  }
}
