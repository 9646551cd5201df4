import { PRIORITY_LIMIT } from 'bullmq';
import type { RedisClient } from './redis-connection';

/**
 * A member older than this is dropped at the tenant's next enqueue: an id
 * whose job never ends normally (failed by the stalled check, removed by an
 * operator, re-added after it finished) stops counting against its tenant
 * after an hour, and an idle tenant's key expires.
 */
const HORIZON_MS = 3600_000;

/** One job of one tenant. */
export interface TenantJob {
  tenantId: string;
  jobId: string;
}

/**
 * Fair shares between tenants with what open-source BullMQ has (groups are
 * Pro-only): priorities. Per queue and tenant, a sorted set holds the ids
 * of the tenant's jobs added and not yet run to the end of an attempt. A new
 * job's priority is 1 + that backlog, so a tenant's k-th queued job runs
 * after every other tenant's k-th (BullMQ takes the lowest priority first,
 * FIFO within one): one tenant's thousand jobs delay another tenant's
 * single job by about one job per worker slot, not by a thousand.
 * Keys live beside BullMQ's (same prefix), outside its namespace.
 */
export class TenantBacklog {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private key(queue: string, tenantId: string): string {
    return `${this.prefix}:fair:${queue}:${tenantId}`;
  }

  /**
   * Priorities of new jobs, one per tenant id in order: a tenant's first
   * gets 1 + its backlog, each further one in the batch one more. Read in
   * one round trip whatever the number of tenants.
   */
  async priorities(queue: string, tenantIds: readonly string[]): Promise<number[]> {
    const tenants = [...new Set(tenantIds)];
    const pipeline = this.redis.pipeline();
    for (const tenantId of tenants) {
      const key = this.key(queue, tenantId);
      pipeline.zremrangebyscore(key, '-inf', Date.now() - HORIZON_MS).zcard(key);
    }
    const results = (await pipeline.exec()) ?? [];
    const next = new Map<string, number>();
    tenants.forEach((tenantId, i) => {
      const [error, size] = results[2 * i + 1];
      if (error) throw error;
      next.set(tenantId, Number(size) + 1);
    });
    return tenantIds.map((tenantId) => {
      const priority = next.get(tenantId)!;
      next.set(tenantId, priority + 1);
      return Math.min(priority, PRIORITY_LIMIT);
    });
  }

  /** The jobs were added (an id already present keeps its score). */
  async added(queue: string, jobs: readonly TenantJob[]): Promise<void> {
    if (jobs.length === 0) return;
    const now = Date.now();
    const pipeline = this.redis.pipeline();
    for (const [tenantId, ids] of byTenant(jobs)) {
      const key = this.key(queue, tenantId);
      pipeline.zadd(key, 'NX', ...ids.flatMap((id) => [now, id])).pexpire(key, HORIZON_MS);
    }
    await pipeline.exec();
  }

  /** The jobs ran to the end of an attempt, or were replaced by the reconciler. */
  async removed(queue: string, jobs: readonly TenantJob[]): Promise<void> {
    if (jobs.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const [tenantId, ids] of byTenant(jobs)) pipeline.zrem(this.key(queue, tenantId), ...ids);
    await pipeline.exec();
  }
}

function byTenant(jobs: readonly TenantJob[]): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const { tenantId, jobId } of jobs) grouped.set(tenantId, [...(grouped.get(tenantId) ?? []), jobId]);
  return grouped;
}
