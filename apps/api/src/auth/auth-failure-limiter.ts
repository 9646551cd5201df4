import { Inject, Injectable } from '@nestjs/common';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { APP_CONFIG, AppConfig } from '@app/config';
import { DomainError } from '@app/domain';
import { PRODUCER_REDIS, RedisClient } from '@app/queue';

/** A counter's key is its own hash tag: on a Redis Cluster the addresses spread over the slots. */
const slotKey = (address: string) => `{${address}}`;

/**
 * Failed authentications per client address, counted in Redis so the limit
 * holds across API replicas (each replica's memory stands in while Redis is
 * down). An address over the limit is answered 429 before any key look-up,
 * so a flood of bad keys costs Redis round trips, never a database statement.
 * Bad API keys and bad admin tokens share one count: an address gets the
 * limit once, whichever secret it guesses.
 */
@Injectable()
export class AuthFailureLimiter {
  private readonly limiter: RateLimiterRedis;
  private readonly points: number;
  private readonly windowSeconds: number;

  constructor(@Inject(PRODUCER_REDIS) redis: RedisClient, @Inject(APP_CONFIG) config: AppConfig) {
    const points = (this.points = config.auth.failureLimit);
    this.windowSeconds = config.auth.failureWindowSeconds;
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${config.redis.namespace}:auth-failures`,
      points,
      duration: this.windowSeconds,
      insuranceLimiter: new RateLimiterMemory({ points, duration: this.windowSeconds }),
    });
  }

  /** Throws 429 `too_many_auth_failures` while the address is over its limit. */
  async refuseIfBlocked(address: string): Promise<void> {
    const state = await this.limiter.get(slotKey(address)).catch(() => null);
    if (state && state.consumedPoints >= this.points) throw this.tooMany(state);
  }

  /** Counts one failure; the failure that crosses the limit is itself answered 429. */
  async record(address: string): Promise<void> {
    const state = await this.limiter.consume(slotKey(address)).catch((rejection: unknown) => rejection);
    if (state instanceof RateLimiterRes && state.remainingPoints <= 0) throw this.tooMany(state);
  }

  private tooMany(state: RateLimiterRes): DomainError {
    return new DomainError('rate_limited', 'too_many_auth_failures', `More than ${this.points} failed authentications from this address within ${this.windowSeconds} s`, {
      retryAfter: Math.max(1, Math.ceil(state.msBeforeNext / 1000)),
    });
  }
}
