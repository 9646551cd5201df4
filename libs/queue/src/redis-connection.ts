import { Redis, RedisOptions } from 'ioredis';

/**
 * Producers on the request path fail fast when Redis is down (the outbox
 * keeps the trigger); workers block and retry forever, as BullMQ requires.
 */
export function createRedis(url: string, role: 'producer' | 'worker'): Redis {
  const options: RedisOptions =
    role === 'producer'
      ? { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, retryStrategy: (n) => Math.min(n * 200, 2000) }
      : { maxRetriesPerRequest: null, retryStrategy: (n) => Math.min(n * 200, 2000) };
  const redis = new Redis(url, { ...options, lazyConnect: false });
  // Connection errors are reported through health checks and failed enqueues, not as crashes.
  redis.on('error', () => undefined);
  return redis;
}
