import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '@app/config';
import { createRedis, RedisClient } from './redis-connection';

/**
 * The process's one subscribed Redis connection, for every pub/sub channel
 * it listens to (classic PUBLISH/SUBSCRIBE, which a Redis Cluster relays to
 * every node). A subscribed connection runs no other command; ioredis
 * subscribes again after a reconnect, and then each listener's `onGap` runs,
 * since messages published meanwhile were lost.
 */
@Injectable()
export class ChannelSubscriber implements OnApplicationShutdown {
  private readonly logger = new Logger(ChannelSubscriber.name);
  private readonly connection: RedisClient;
  private readonly listeners = new Map<string, { onMessage: (text: string) => void; onGap: () => void }>();

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.connection = createRedis(config.redis, 'worker', 'subscriber');
    this.connection.on('message', (channel: string, text: string) => this.listeners.get(channel)?.onMessage(text));
    this.connection.on('ready', () => {
      for (const listener of this.listeners.values()) listener.onGap();
    });
  }

  listen(channel: string, onMessage: (text: string) => void, onGap: () => void): void {
    this.listeners.set(channel, { onMessage, onGap });
    this.connection.subscribe(channel).catch((error: Error) => this.logger.warn(`${channel}: subscribe failed: ${error.message}`));
  }

  onApplicationShutdown(): void {
    this.connection.disconnect();
  }
}
