import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database } from '@app/database';
import { DomainError } from '@app/domain';
import { findLiveApiKey } from '@app/event-store';
import { Invalidation } from '@app/queue';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { SingleFlight } from '../cache/single-flight';
import { CacheInvalidation } from './cache-invalidation';

export interface Principal {
  tenantId: string;
  keyId: string;
  /** The key is valid but its tenant is suspended: the guard refuses it with 403. */
  suspended: boolean;
}

export interface NewApiKey {
  keyId: string;
  /** The secret, shown once. */
  key: string;
  prefix: string;
  hash: Buffer;
}

// sst_<tenant id as 32 hex>_<256-bit secret, base64url>: the tenant is readable so
// the look-up runs under that tenant's RLS context; the prefix helps secret scanners.
const KEY_FORMAT = /^sst_([0-9a-f]{32})_([A-Za-z0-9_-]{43})$/;

const hashKey = (key: string) => createHash('sha256').update(key).digest();

const unauthorized = () => new DomainError('unauthorized', 'invalid_api_key', 'Missing, malformed, unknown or revoked API key');

@Injectable()
export class ApiKeysService {
  private readonly cache = new Map<string, Principal & { expiresAt: number }>();
  private readonly lookups = new SingleFlight<Principal | null>();

  constructor(
    private readonly db: Database,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly failures: AuthFailureLimiter,
    private readonly invalidation: CacheInvalidation,
  ) {
    invalidation.onInvalidation((message) => this.drop(message));
  }

  generate(tenantId: string): NewApiKey {
    const key = `sst_${tenantId.replace(/-/g, '')}_${randomBytes(32).toString('base64url')}`;
    return { keyId: randomUUID(), key, prefix: key.slice(0, 45), hash: hashKey(key) };
  }

  /**
   * Verifies a bearer key; a verified key is trusted for API_KEY_CACHE_TTL_MS,
   * or until a revocation or suspension reaches this replica (CacheInvalidation).
   * Failures count against the client's address (AUTH_FAILURE_LIMIT).
   */
  async authenticate(key: string, clientAddress = 'unknown'): Promise<Principal> {
    const hash = hashKey(key);
    const id = hash.toString('hex');
    const cached = this.cache.get(id);
    if (cached && cached.expiresAt > Date.now()) return { tenantId: cached.tenantId, keyId: cached.keyId, suspended: cached.suspended };
    await this.failures.refuseIfBlocked(clientAddress);
    const principal = await this.lookups.run(id, () => this.lookUp(key, hash));
    if (!principal) {
      await this.failures.record(clientAddress);
      throw unauthorized();
    }
    return principal;
  }

  private async lookUp(key: string, hash: Buffer): Promise<Principal | null> {
    const match = KEY_FORMAT.exec(key);
    if (!match) return null;
    const hex = match[1];
    const tenantId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    const version = this.invalidation.version;
    const found = await this.db.tenantTx(tenantId, (tx) => findLiveApiKey(tx, hash));
    if (!found) return null;
    const principal = { tenantId, keyId: found.keyId, suspended: found.suspended };
    if (this.config.auth.apiKeyCacheTtlMs > 0 && this.invalidation.version === version) {
      this.cache.set(hash.toString('hex'), { ...principal, expiresAt: Date.now() + this.config.auth.apiKeyCacheTtlMs });
    }
    return principal;
  }

  /** Revocation: immediate in this process, in the others once the message arrives (see CacheInvalidation). */
  forget(keyId: string): void {
    this.invalidation.publish({ kind: 'api-key', keyId });
  }

  /** A suspension, its end or a deletion: as for a revocation. */
  forgetTenant(tenantId: string): void {
    this.invalidation.publish({ kind: 'tenant-keys', tenantId });
  }

  private drop(message: Invalidation): void {
    if (message.kind === 'tenant-policy' || message.kind === 'sessions') return;
    if (message.kind === 'all') return this.cache.clear();
    const matches = message.kind === 'api-key' ? (p: Principal) => p.keyId === message.keyId : (p: Principal) => p.tenantId === message.tenantId;
    for (const [k, v] of this.cache) if (matches(v)) this.cache.delete(k);
  }
}
