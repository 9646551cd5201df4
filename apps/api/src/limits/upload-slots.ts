import { randomUUID } from 'node:crypto';
import type { RedisClient } from '@app/queue';
import { DomainError } from '@app/domain';

/** A slot lapses this long after its last renewal: how long the uploads of a process that died still count. */
const LEASE_MS = 60_000;
/** A slot frees whenever one of the tenant's uploads ends, which nobody can predict: retry soon. */
const RETRY_AFTER_SECONDS = 1;

// Redis's clock stamps the leases, so the replicas' clocks need not agree.
const NOW_MS = `local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)`;
/** KEYS[1] the tenant's slots; ARGV cap, lease, slot id. Drops lapsed slots, then takes one if fewer than the cap are held. */
const ACQUIRE = `${NOW_MS}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;
/** KEYS[1] the tenant's slots; ARGV lease, slot id. Extends a slot still held. */
const RENEW = `${NOW_MS}
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`;

/**
 * The per-tenant cap on uploads in progress (UPLOADS_PER_TENANT), counted in
 * Redis so it holds across API replicas: a sorted set of leased slots per
 * tenant, renewed while the upload runs, so a replica that dies frees its
 * slots within LEASE_MS. While Redis is down, each replica's own count
 * stands in (the cap then holds per replica), as for the other limiters.
 */
export class UploadSlots {
  private readonly local = new Map<string, number>();

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly perTenant: number,
  ) {}

  /** Takes one of the tenant's slots, or throws 429 `too_many_uploads`; the returned function gives it back. */
  async acquire(tenantId: string): Promise<() => Promise<void>> {
    const key = `${this.prefix}:uploads:${tenantId}`;
    const slotId = randomUUID();
    const granted = await this.redis.eval(ACQUIRE, 1, key, this.perTenant, LEASE_MS, slotId).then(
      (result) => result === 1,
      () => (this.local.get(tenantId) ?? 0) < this.perTenant,
    );
    if (!granted) {
      throw new DomainError('rate_limited', 'too_many_uploads', `This tenant already has ${this.perTenant} uploads in progress; retry when one has finished`, {
        retryAfter: RETRY_AFTER_SECONDS,
        limit: this.perTenant,
      });
    }
    this.local.set(tenantId, (this.local.get(tenantId) ?? 0) + 1);
    const renewal = setInterval(() => void this.redis.eval(RENEW, 1, key, LEASE_MS, slotId).catch(() => undefined), LEASE_MS / 3).unref();
    return async () => {
      clearInterval(renewal);
      const held = this.local.get(tenantId)! - 1;
      if (held === 0) this.local.delete(tenantId);
      else this.local.set(tenantId, held);
      await this.redis.zrem(key, slotId).catch(() => undefined);
    };
  }
}
