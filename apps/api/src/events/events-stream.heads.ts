import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { ChannelSubscriber, parseSessionHead, PRODUCER_REDIS, publishSessionHead, QuietWindows, RedisClient, SessionHead, sessionHeadsChannel } from '@app/queue';

/** A stream's wake-up: the new head when a message said so, null after a gap in the subscription (anything may have been missed). */
export type Wake = (headSeq: number | null) => void;

/**
 * Session heads across API replicas and workers over Redis pub/sub, on the
 * process's one subscribed connection (ChannelSubscriber), not one per
 * stream; a head committed here wakes this process's streams at once, and
 * every other one when the message arrives.
 */
@Injectable()
export class SessionHeads {
  private readonly namespace: string;
  /** Per `tenantId/sessionId`, the open streams' wake-ups. */
  private readonly listeners = new Map<string, Set<Wake>>();
  private readonly searchNotices: QuietWindows;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(PRODUCER_REDIS) private readonly publisher: RedisClient,
    subscriber: ChannelSubscriber,
  ) {
    this.namespace = config.redis.namespace;
    this.searchNotices = new QuietWindows(config.search.indexDelayMs);
    subscriber.listen(
      sessionHeadsChannel(this.namespace),
      (text) => {
        const head = parseSessionHead(text);
        if (head) this.wake(head);
      },
      // Back after an outage: messages may have been lost, so every stream looks.
      () => this.wakeAll(),
    );
  }

  /** Registers a stream's wake-up; the returned function removes it. */
  listen(tenantId: string, sessionId: string, wake: Wake): () => void {
    const key = `${tenantId}/${sessionId}`;
    const set = this.listeners.get(key) ?? new Set<Wake>();
    set.add(wake);
    this.listeners.set(key, set);
    return () => {
      set.delete(wake);
      if (set.size === 0) this.listeners.delete(key);
    };
  }

  /** After a commit: wakes this process's streams and tells the others, and the search indexer when due; never throws. */
  publish(head: SessionHead): void {
    this.wake(head);
    publishSessionHead(this.publisher, this.namespace, head, this.searchNotices.due(head));
  }

  private wake(head: SessionHead): void {
    for (const wake of this.listeners.get(`${head.tenantId}/${head.sessionId}`) ?? []) wake(head.headSeq);
  }

  private wakeAll(): void {
    for (const set of this.listeners.values()) for (const wake of set) wake(null);
  }
}
