import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { ChannelSubscriber, PRODUCER_REDIS, RedisClient } from '@app/queue';

/** What every API replica drops from its caches. */
export type Invalidation =
  /** A revoked key. */
  | { kind: 'api-key'; keyId: string }
  /** A tenant suspended, reinstated or deleted: its keys. */
  | { kind: 'tenant-keys'; tenantId: string }
  /** A tenant's limits or quotas changed through the admin API. */
  | { kind: 'tenant-policy'; tenantId: string }
  /** Messages may have been missed (the subscription was down): everything. */
  | { kind: 'all' };

const KINDS = new Set<Invalidation['kind']>(['api-key', 'tenant-keys', 'tenant-policy', 'all']);

function parse(text: string): Invalidation | null {
  try {
    const message = JSON.parse(text) as Invalidation;
    return KINDS.has(message?.kind) ? message : null;
  } catch {
    return null;
  }
}

/**
 * Cache invalidation across API replicas over Redis pub/sub (classic
 * PUBLISH/SUBSCRIBE, which a Redis Cluster relays to every node). A change
 * applies in the replica that made it at once, and in every other one as
 * soon as the message arrives (milliseconds). Best effort: a replica that
 * misses a message (Redis unreachable when it was published, its
 * subscription down) keeps a stale entry until the entry's own TTL
 * (API_KEY_CACHE_TTL_MS, the tenant policy's 5 s), which stays the bound;
 * a replica whose subscription comes back drops everything, since it cannot
 * know what it missed.
 */
@Injectable()
export class CacheInvalidation {
  private readonly channel: string;
  private readonly handlers: Array<(message: Invalidation) => void> = [];
  private generation = 0;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(PRODUCER_REDIS) private readonly publisher: RedisClient,
    subscriber: ChannelSubscriber,
  ) {
    this.channel = `${config.redis.namespace}:cache-invalidation`;
    subscriber.listen(
      this.channel,
      (text) => {
        const message = parse(text);
        if (message) this.apply(message);
      },
      () => this.apply({ kind: 'all' }),
    );
  }

  /** Registers what a cache drops for each message. */
  onInvalidation(handler: (message: Invalidation) => void): void {
    this.handlers.push(handler);
  }

  /**
   * Counts invalidations seen by this process. A cache reads it before a
   * look-up and stores the result only if it has not moved since: a read
   * that began before a change may have seen the old row, and the message
   * that would drop it may already have been applied.
   */
  get version(): number {
    return this.generation;
  }

  /** Applies the change here at once and tells the other replicas; never throws. */
  publish(message: Invalidation): void {
    this.apply(message);
    this.publisher.publish(this.channel, JSON.stringify(message)).catch(() => undefined);
  }

  private apply(message: Invalidation): void {
    this.generation += 1;
    for (const handler of this.handlers) handler(message);
  }
}
