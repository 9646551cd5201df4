import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { setTimeout as sleep } from 'node:timers/promises';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, RLWrapperTimeouts } from 'rate-limiter-flexible';
import { APP_CONFIG, AppConfig, TenantLimits, TenantQuotas } from '@app/config';
import { Database, Tx } from '@app/database';
import { DomainError } from '@app/domain';
import { readTenantOverrides, readUsage, TenantOverrides } from '@app/event-store';
import { PRODUCER_REDIS, RedisClient } from '@app/queue';
import { CacheInvalidation } from '../auth/cache-invalidation';
import { SingleFlight } from '../cache/single-flight';
import type { ParsedBodySize } from '../http/body-parsing';
import { hasBody, StreamedBodySize } from '../http/request-body';

/** One tenant's effective limits and quotas: the configured defaults with the admin API's overrides. */
export interface TenantPolicy {
  limits: TenantLimits;
  quotas: TenantQuotas;
}

/** The configured defaults with the tenant's overrides. */
export function effectivePolicy(config: AppConfig, overrides: TenantOverrides | undefined): TenantPolicy {
  return { limits: { ...config.tenants.limits, ...overrides?.limits }, quotas: { ...config.tenants.quotas, ...overrides?.quotas } };
}

/** An override set through the admin API takes effect on every replica once CacheInvalidation's message arrives; this bounds a missed one. */
/** Whether the tenant has a storage quota: only then do writers check it. */
export const hasQuota = (quotas: TenantQuotas) => quotas.eventBytes > 0 || quotas.toolOutputBytes > 0;

const POLICY_TTL_MS = 5000;
/** Every tenant request asks Redis: one that does not answer (hung, network cut) costs a request at most this, then memory decides. */
const REDIS_TIMEOUT_MS = 200;

type Bucket = 'requests' | 'bytes';

/** A tenant's bucket keys carry its id as their hash tag: on a Redis Cluster tenants spread over the slots, and each key's script stays in one. */
const bucketKey = (tenantId: string) => `{${tenantId}}`;

/** What one bucket said about this request. */
interface Verdict {
  bucket: Bucket;
  quota: number;
  state: RateLimiterRes;
  refused: boolean;
}

/**
 * Per-tenant limits, decided before any database work:
 *
 * - Requests and request-body bytes per second, each a one-second bucket in
 *   Redis (rate-limiter-flexible's fixed window: a bucket of one second's
 *   worth, refilled whole each second), so the limits hold across API
 *   replicas; each replica's memory stands in while Redis is down. Over the
 *   request limit, 429 `tenant_rate_limited`; a tenant that has used up its
 *   second is then refused from this process's memory until the second
 *   ends, without asking Redis about its request count. A body larger than
 *   what is left of the byte bucket still goes through when the bucket is
 *   not empty; the overdraft blocks the tenant's bodies until it is paid
 *   back at the tenant's rate (429 `tenant_byte_rate_limited`), so uploads
 *   larger than one second's worth are possible and the average holds.
 *   A streamed body is charged what was read of it once it is over (see
 *   admit), never its declared length.
 *   Every answer carries the IETF draft's RateLimit-Policy and RateLimit
 *   headers; a refusal, Retry-After, and it is paced (see pace).
 * - How many pooled connections the tenant's transactions may hold at once
 *   in this process (Database.capTenantConnections).
 * - Storage quotas, checked by the writers (assertWithinQuotas).
 */
@Injectable()
export class TenantLimitsService {
  private readonly policies = new Map<string, TenantPolicy & { expiresAt: number }>();
  private readonly loading = new SingleFlight<TenantPolicy>();
  private readonly buckets = new Map<string, RLWrapperTimeouts>();
  /** When this process answers each refused tenant's latest refusal (see pace). */
  private readonly refusalsAt = new Map<string, number>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(PRODUCER_REDIS) private readonly redis: RedisClient,
    private readonly db: Database,
    private readonly invalidation: CacheInvalidation,
  ) {
    invalidation.onInvalidation((message) => {
      if (message.kind === 'all') this.policies.clear();
      if (message.kind === 'tenant-policy') this.policies.delete(message.tenantId);
    });
    db.capTenantConnections({
      // A tenant's first transactions (the key look-up) run before its policy is known: the default cap applies.
      capOf: (tenantId) => (this.policies.get(tenantId)?.limits ?? config.tenants.limits).maxConnections,
      maxWaitMs: config.tenants.connectionWaitMs,
    });
  }

  /**
   * The tenant's effective limits and quotas, cached for POLICY_TTL_MS. A miss
   * reads them in a transaction of the tenant's own: call it before opening one.
   */
  async policyOf(tenantId: string): Promise<TenantPolicy> {
    const cached = this.policies.get(tenantId);
    if (cached && cached.expiresAt > Date.now()) return cached;
    return this.loading.run(tenantId, () => this.load(tenantId));
  }

  /** Drops the cached policy: an admin change applies to the next request, on this replica and the others (CacheInvalidation). */
  forget(tenantId: string): void {
    this.invalidation.publish({ kind: 'tenant-policy', tenantId });
  }

  /**
   * Charges one request and its body against the tenant's buckets; throws 429 when either is used up.
   * A parsed body is charged its size; a body not read yet (a streamed upload) only needs the bucket
   * not to be used up, and is charged what was received once the response is over: a declared
   * Content-Length is a claim, and a lying one must not put the tenant in debt for hours.
   */
  async admit(tenantId: string, request: Request & ParsedBodySize & StreamedBodySize, response: Response): Promise<void> {
    const { limits } = await this.policyOf(tenantId);
    const bytes = request.bodyBytes ?? 0;
    const unread = request.bodyBytes === undefined && hasBody(request) && limits.bytesPerSecond > 0;
    // Both buckets in one round trip; a request refused by the first gets its body's bytes back from the second.
    const [requests, body] = await Promise.all([
      limits.requestsPerSecond > 0 ? this.takeRequest(tenantId, limits.requestsPerSecond) : undefined,
      limits.bytesPerSecond > 0 && bytes > 0 ? this.takeBytes(tenantId, bytes, limits.bytesPerSecond) : unread ? this.peekBytes(tenantId, limits.bytesPerSecond) : undefined,
    ]);
    if (requests?.refused && body && !body.refused && bytes > 0) void this.bucket('bytes', limits.bytesPerSecond).reward(bucketKey(tenantId), bytes).catch(() => undefined);
    if (unread && !requests?.refused && !body?.refused) response.once('close', () => void this.chargeReceived(tenantId, request, response, limits.bytesPerSecond));
    const verdicts = (requests?.refused ? [requests] : [requests, body]).filter((v): v is Verdict => v !== undefined);
    const policy = [
      limits.requestsPerSecond > 0 ? `"requests";q=${limits.requestsPerSecond};w=1` : undefined,
      limits.bytesPerSecond > 0 ? `"bytes";q=${limits.bytesPerSecond};w=1` : undefined,
    ].filter(Boolean);
    if (policy.length > 0) response.setHeader('RateLimit-Policy', policy.join(', '));
    if (verdicts.length === 0) return;
    const refused = verdicts.find((v) => v.refused);
    const paced = refused ? await this.pace(tenantId, refused, limits.requestsPerSecond) : 0;
    const seconds = (v: Verdict) => Math.max(1, Math.ceil((v.state.msBeforeNext - paced) / 1000));
    response.setHeader('RateLimit', verdicts.map((v) => `"${v.bucket}";r=${v.refused ? 0 : Math.max(0, v.quota - v.state.consumedPoints)};t=${seconds(v)}`).join(', '));
    if (!refused) return;
    throw refused.bucket === 'requests'
      ? new DomainError('rate_limited', 'tenant_rate_limited', `More than ${refused.quota} requests per second for this tenant`, { retryAfter: seconds(refused) })
      : new DomainError('rate_limited', 'tenant_byte_rate_limited', `More than ${refused.quota} request-body bytes per second for this tenant`, {
          retryAfter: seconds(refused),
        });
  }

  /**
   * Holds a refusal until the tenant's bucket refills, then answers the
   * tenant's waiting refusals one at a time, 1/rate apart (each waits at
   * most a second beyond the refill). A client that ignores Retry-After
   * and asks again at once is thereby slowed to the tenant's rate: a flood
   * over many connections costs the API a few refusals per connection and
   * second, not its whole CPU, and its retries arrive spread out, not all
   * at the instant the bucket refills. Returns the milliseconds waited.
   */
  private async pace(tenantId: string, refused: Verdict, perSecond: number): Promise<number> {
    const now = Date.now();
    const refill = now + Math.min(refused.state.msBeforeNext, 1000);
    const at = Math.min(Math.max(refill, this.refusalsAt.get(tenantId) ?? 0) + (perSecond > 0 ? 1000 / perSecond : 0), refill + 1000);
    this.refusalsAt.set(tenantId, at);
    await sleep(at - now);
    if (this.refusalsAt.get(tenantId) === at) this.refusalsAt.delete(tenantId);
    return at - now;
  }

  /**
   * Throws 413 `quota_exceeded` when the tenant stores more than a quota
   * allows, counting the writes of `tx` (call it after them, so the
   * transaction then rolls back and nothing is written). Costs no query
   * when the tenant has no quota. Concurrent writers' uncommitted bytes are
   * not seen, so a quota may be overshot by what is in flight.
   */
  async assertWithinQuotas(tx: Tx, quotas: TenantQuotas): Promise<void> {
    if (!hasQuota(quotas)) return;
    const usage = await readUsage(tx);
    const over = (['eventBytes', 'toolOutputBytes'] as const).find((kind) => quotas[kind] > 0 && usage[kind] > quotas[kind]);
    if (!over) return;
    const what = over === 'eventBytes' ? 'event' : 'tool-output';
    throw new DomainError('too_large', 'quota_exceeded', `This write would take the tenant's stored ${what} bytes to ${usage[over]}, over its quota of ${quotas[over]}`, {
      quota: over,
      limit: quotas[over],
      usage: usage[over],
    });
  }

  private async load(tenantId: string): Promise<TenantPolicy> {
    const version = this.invalidation.version;
    const policy = effectivePolicy(this.config, await this.db.tenantTx(tenantId, readTenantOverrides));
    if (this.invalidation.version === version) this.policies.set(tenantId, { ...policy, expiresAt: Date.now() + POLICY_TTL_MS });
    return policy;
  }

  private async takeRequest(tenantId: string, perSecond: number): Promise<Verdict | undefined> {
    // Refused while the second lasts once its last point is taken: later requests never reach Redis.
    const bucket = this.bucket('requests', perSecond, { inMemoryBlockOnConsumed: perSecond });
    return bucket.consume(bucketKey(tenantId)).then(
      (state) => ({ bucket: 'requests', quota: perSecond, state, refused: false }),
      (rejection: unknown) => (rejection instanceof RateLimiterRes ? { bucket: 'requests', quota: perSecond, state: rejection, refused: true } : undefined),
    );
  }

  private async takeBytes(tenantId: string, bytes: number, perSecond: number): Promise<Verdict | undefined> {
    const bucket = this.bucket('bytes', perSecond);
    const state = await bucket.consume(bucketKey(tenantId), bytes).catch((rejection: unknown) => rejection);
    if (!(state instanceof RateLimiterRes)) return undefined;
    const verdict: Verdict = { bucket: 'bytes', quota: perSecond, state, refused: false };
    if (state.consumedPoints <= perSecond) return verdict;
    if (state.consumedPoints - bytes >= perSecond) return { ...verdict, refused: true };
    const overdraft = state.consumedPoints - perSecond;
    const blocked = await bucket.block(bucketKey(tenantId), Math.ceil(overdraft / perSecond)).catch(() => state);
    return { ...verdict, state: blocked };
  }

  /** Whether the bucket has room left, taking nothing from it. */
  private async peekBytes(tenantId: string, perSecond: number): Promise<Verdict | undefined> {
    const state = await this.bucket('bytes', perSecond)
      .get(bucketKey(tenantId))
      .catch(() => null);
    if (!(state instanceof RateLimiterRes)) return undefined;
    return { bucket: 'bytes', quota: perSecond, state, refused: state.consumedPoints >= perSecond };
  }

  /**
   * Charges a streamed body what the service read of it, any overdraft blocking the bucket until paid
   * back. A request that did not succeed is charged at most one second's worth: its refusal must
   * not cost the tenant more than its own reading did (discardRest reads more than the request's use).
   */
  private async chargeReceived(tenantId: string, request: StreamedBodySize, response: Response, perSecond: number): Promise<void> {
    const received = request.receivedBytes ?? 0;
    const succeeded = response.writableFinished && response.statusCode < 400;
    const bytes = succeeded ? received : Math.min(received, perSecond);
    if (bytes <= 0) return;
    const bucket = this.bucket('bytes', perSecond);
    const state = await bucket.consume(bucketKey(tenantId), bytes).catch((rejection: unknown) => rejection);
    if (!(state instanceof RateLimiterRes) || state.consumedPoints <= perSecond) return;
    await bucket.block(bucketKey(tenantId), Math.ceil((state.consumedPoints - perSecond) / perSecond)).catch(() => undefined);
  }

  /** One limiter per bucket and rate; limiters of one bucket share its Redis counter, so a changed rate applies mid-second. */
  private bucket(name: Bucket, perSecond: number, options: { inMemoryBlockOnConsumed?: number } = {}): RLWrapperTimeouts {
    const key = `${name}:${perSecond}`;
    let bucket = this.buckets.get(key);
    if (!bucket) {
      const limiter = new RateLimiterRedis({
        storeClient: this.redis,
        keyPrefix: `${this.config.redis.namespace}:tenant-${name}`,
        points: perSecond,
        duration: 1,
        ...options,
        insuranceLimiter: new RateLimiterMemory({ points: perSecond, duration: 1 }),
      });
      bucket = new RLWrapperTimeouts({ limiter, timeoutMs: REDIS_TIMEOUT_MS });
      this.buckets.set(key, bucket);
    }
    return bucket;
  }
}
