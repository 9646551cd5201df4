import { Logger } from '@nestjs/common';
import { Redis, RedisOptions } from 'ioredis';
import { causeOf, endpointOf } from '@app/lifecycle';

/** While Redis stays unreachable, one line per this interval (with the count of failed attempts), not one per retry. */
const OUTAGE_REPORT_INTERVAL_MS = 30_000;

/**
 * Producers on the request path fail fast when Redis is down (the outbox
 * keeps the trigger); workers block and retry forever, as BullMQ requires.
 * Either way an outage is logged once, then once per interval, then its end.
 */
export function createRedis(url: string, role: 'producer' | 'worker', name: string = role): Redis {
  const options: RedisOptions =
    role === 'producer'
      ? { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, retryStrategy: (n) => Math.min(n * 200, 2000) }
      : { maxRetriesPerRequest: null, retryStrategy: (n) => Math.min(n * 200, 2000) };
  const redis = new Redis(url, { ...options, lazyConnect: false });
  reportOutages(redis, endpointOf(url, 6379), name);
  return redis;
}

function reportOutages(redis: Redis, endpoint: string, name: string): void {
  const logger = new Logger(`Redis(${name})`);
  let downSince: number | undefined;
  let lastReport = 0;
  let failures = 0;
  redis.on('error', (error) => {
    failures += 1;
    const now = Date.now();
    if (downSince === undefined) {
      downSince = lastReport = now;
      logger.warn(`REDIS_URL: Redis at ${endpoint} is unreachable (${causeOf(error)}); retrying`);
    } else if (now - lastReport >= OUTAGE_REPORT_INTERVAL_MS) {
      lastReport = now;
      logger.warn(`Redis at ${endpoint} still unreachable after ${Math.round((now - downSince) / 1000)} s (${failures} failed attempts): ${causeOf(error)}`);
    }
  });
  redis.on('ready', () => {
    if (downSince === undefined) return;
    logger.log(`Redis at ${endpoint} reachable again after ${Math.round((Date.now() - downSince) / 1000)} s (${failures} failed attempts)`);
    downSince = undefined;
    failures = 0;
  });
}

/** One connection attempt with a bound: null when Redis answers, else where it was tried and why it failed. */
export async function probeRedis(url: string, timeoutMs = 3000): Promise<{ endpoint: string; cause: string } | null> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  // connect() rejects with "Connection is closed."; the socket's own error says why.
  let first: unknown;
  redis.on('error', (error) => (first ??= error));
  try {
    await redis.connect();
    await redis.ping();
    return null;
  } catch (error) {
    return { endpoint: endpointOf(url, 6379), cause: causeOf(first ?? error) };
  } finally {
    redis.disconnect();
  }
}
