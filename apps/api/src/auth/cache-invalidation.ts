import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { ChannelSubscriber, Invalidation, invalidationsChannel, parseInvalidation, PRODUCER_REDIS, publishInvalidation, RedisClient } from '@app/queue';

/**
 * Cache invalidation across API replicas over Redis pub/sub (classic
 * PUBLISH/SUBSCRIBE, which a Redis Cluster relays to every node). A change
 * applies in the replica that made it at once, and in every other one as
 * soon as the message arrives (milliseconds). Best effort: a replica that
 * misses a message (Redis unreachable when it was published, its
 * subscription down) keeps a stale entry until the entry's own TTL
 * (API_KEY_CACHE_TTL_MS, the tenant policy's 5 s), which stays the bound;
 * a replica whose subscription comes back drops everything, since it cannot
 * know what it missed. The same messages end live event streams whose
 * access went (StreamAccess).
 */
@Injectable()
export class CacheInvalidation {
  private readonly namespace: string;
  private readonly handlers: Array<(message: Invalidation) => void> = [];
  private generation = 0;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(PRODUCER_REDIS) private readonly publisher: RedisClient,
    subscriber: ChannelSubscriber,
  ) {
    this.namespace = config.redis.namespace;
    subscriber.listen(
      invalidationsChannel(this.namespace),
      (text) => {
        const message = parseInvalidation(text);
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
    publishInvalidation(this.publisher, this.namespace, message);
  }

  private apply(message: Invalidation): void {
    this.generation += 1;
    for (const handler of this.handlers) handler(message);
  }
}
