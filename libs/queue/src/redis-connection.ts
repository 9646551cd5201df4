import { Logger } from '@nestjs/common';
import { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { RedisSettings } from '@app/config';
import { causeOf, endpointOf } from '@app/lifecycle';

/** A single server or a Redis Cluster (REDIS_CLUSTER_NODES): BullMQ, the rate limiters and pub/sub take either. */
export type RedisClient = Redis | Cluster;

/** Where to connect (key naming is the caller's). */
type RedisEndpoint = Pick<RedisSettings, 'url' | 'clusterNodes'>;

/** While Redis stays unreachable, one line per this interval (with the count of failed attempts), not one per retry. */
const OUTAGE_REPORT_INTERVAL_MS = 30_000;

const retryStrategy = (attempt: number) => Math.min(attempt * 200, 2000);

/** The variable an operator fixes when Redis cannot be reached. */
export function redisVariable(settings: RedisEndpoint): string {
  return settings.clusterNodes ? 'REDIS_CLUSTER_NODES' : 'REDIS_URL';
}

/** Where Redis is, for log lines: the server, or the cluster's seed nodes. */
export function redisEndpoint(settings: RedisEndpoint): string {
  return settings.clusterNodes ? settings.clusterNodes.map((n) => `${n.host}:${n.port}`).join(',') : endpointOf(settings.url, 6379);
}

/** REDIS_URL's credentials and TLS, which a cluster applies to each node. */
function nodeOptions(url: string): RedisOptions {
  const u = new URL(url);
  return {
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** A client of the configured Redis: `new Redis(url)` or, on a cluster, `new Cluster(nodes)`, with the same per-command options. */
function connect(settings: RedisEndpoint, options: RedisOptions & Pick<ClusterOptions, 'enableOfflineQueue'>): RedisClient {
  if (!settings.clusterNodes) return new Redis(settings.url, options);
  const { enableOfflineQueue, retryStrategy: clusterRetryStrategy, lazyConnect, ...perNode } = options;
  return new Cluster(settings.clusterNodes, {
    enableOfflineQueue,
    clusterRetryStrategy,
    lazyConnect,
    redisOptions: { ...nodeOptions(settings.url), ...perNode },
  });
}

/**
 * Producers on the request path fail fast when Redis is down (the outbox
 * keeps the trigger); workers block and retry forever, as BullMQ requires.
 * Either way an outage is logged once, then once per interval, then its end.
 */
export function createRedis(settings: RedisEndpoint, role: 'producer' | 'worker', name: string = role): RedisClient {
  const options: RedisOptions =
    role === 'producer'
      ? { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, retryStrategy }
      : { maxRetriesPerRequest: null, retryStrategy };
  const redis = connect(settings, { ...options, lazyConnect: false });
  reportOutages(redis, settings, name);
  return redis;
}

function reportOutages(redis: RedisClient, settings: RedisEndpoint, name: string): void {
  const logger = new Logger(`Redis(${name})`);
  const endpoint = redisEndpoint(settings);
  let downSince: number | undefined;
  let lastReport = 0;
  let failures = 0;
  redis.on('error', (error) => {
    failures += 1;
    const now = Date.now();
    if (downSince === undefined) {
      downSince = lastReport = now;
      logger.warn(`${redisVariable(settings)}: Redis at ${endpoint} is unreachable (${causeOf(error)}); retrying`);
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

/** One connection attempt with a bound: null when Redis (a cluster: its slot map and a node) answers, else where it was tried and why it failed. */
export async function probeRedis(settings: RedisEndpoint, timeoutMs = 3000): Promise<{ endpoint: string; cause: string } | null> {
  const redis = connect(settings, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  // connect() rejects with "Connection is closed."; the socket's own error says why.
  let first: unknown;
  redis.on('error', (error) => (first ??= error));
  try {
    await redis.connect();
    await redis.ping();
    return null;
  } catch (error) {
    return { endpoint: redisEndpoint(settings), cause: causeOf(first ?? error) };
  } finally {
    redis.disconnect();
  }
}
