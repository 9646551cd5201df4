import { Inject, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { APP_CONFIG, AppConfig } from '@app/config';
import { DomainError } from '@app/domain';
import { PRODUCER_REDIS } from '@app/queue';

/**
 * Requests per tenant and second (TENANT_REQUEST_RATE, 0 = unlimited),
 * counted in Redis so the limit holds across API replicas; each replica's
 * memory stands in while Redis is down. Every answer carries the IETF
 * draft's RateLimit-Policy and RateLimit headers; over the limit, 429
 * `tenant_rate_limited` with Retry-After, before any database work.
 */
@Injectable()
export class TenantRateLimiter {
  private readonly limiter: RateLimiterRedis | null;
  private readonly policy: string;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig, @Inject(PRODUCER_REDIS) redis: Redis) {
    const points = config.limits.tenantRequestRate;
    this.policy = `"requests";q=${points};w=1`;
    this.limiter =
      points === 0
        ? null
        : new RateLimiterRedis({
            storeClient: redis,
            keyPrefix: `${config.redis.prefix}:tenant-requests`,
            points,
            duration: 1,
            insuranceLimiter: new RateLimiterMemory({ points, duration: 1 }),
          });
  }

  async admit(tenantId: string, response: Response): Promise<void> {
    if (!this.limiter) return;
    const state = await this.limiter.consume(tenantId).catch((rejection: unknown) => rejection);
    if (!(state instanceof RateLimiterRes)) return;
    const reset = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
    response.setHeader('RateLimit-Policy', this.policy);
    response.setHeader('RateLimit', `"requests";r=${Math.max(0, state.remainingPoints)};t=${reset}`);
    if (state.consumedPoints > this.config.limits.tenantRequestRate) {
      throw new DomainError('rate_limited', 'tenant_rate_limited', `More than ${this.config.limits.tenantRequestRate} requests per second for this tenant`, {
        retryAfter: reset,
      });
    }
  }
}
