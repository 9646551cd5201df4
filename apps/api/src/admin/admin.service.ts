import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG, AppConfig } from '@app/config';
import { Database, Tx } from '@app/database';
import { applyConfigPatch, DomainError, invalid, resolveSessionConfig } from '@app/domain';
import {
  deleteTenant,
  findTenant,
  insertApiKey,
  insertTenant,
  listTenants,
  revokeApiKey,
  setTenantSuspended,
  tenantExists,
  TenantRecord,
  updateTenantConfig,
  updateTenantOverrides,
  updateTenantRetention,
} from '@app/event-store';
import { ApiKeysService } from '../auth/api-keys.service';
import { effectivePolicy, TenantLimitsService } from '../limits/tenant-limits';
import { TenantLimitsDto, TenantQuotasDto, UpdateTenantDto } from './admin.dto';

const tenantNotFound = () => new DomainError('not_found', 'tenant_not_found', 'Tenant does not exist');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Overrides with a patch applied: a number sets one, null drops it, a key left out stays. */
function patchOverrides<T extends object>(current: Partial<T>, patch: TenantLimitsDto | TenantQuotasDto | undefined): Partial<T> {
  const next: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch ?? {})) {
    if (value === null) delete next[key];
    else if (value !== undefined) next[key] = value;
  }
  return next as Partial<T>;
}

@Injectable()
export class AdminService {
  constructor(
    private readonly db: Database,
    private readonly keys: ApiKeysService,
    private readonly tenantLimits: TenantLimitsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async createTenant(name: string) {
    const tenantId = randomUUID();
    return this.db.tenantTx(tenantId, async (tx) => {
      const tenant = await insertTenant(tx, tenantId, name);
      return { tenantId, name, createdAt: tenant.createdAt.toISOString(), apiKey: await this.issue(tx, tenantId, 'default') };
    });
  }

  /** Every tenant with its effective limits, quotas and usage, paged by tenant id. */
  async listTenants(limit = 100, cursor?: string) {
    const rows = await this.db.systemTx((tx) => listTenants(tx, limit + 1, cursor));
    const page = rows.slice(0, limit);
    return { tenants: page.map((t) => this.view(t)), nextCursor: rows.length > limit ? page[page.length - 1].tenantId : null };
  }

  async getTenant(tenantId: string) {
    if (!UUID.test(tenantId)) throw tenantNotFound();
    const tenant = await this.db.tenantTx(tenantId, findTenant);
    if (!tenant) throw tenantNotFound();
    return this.view(tenant);
  }

  async issueKey(tenantId: string, name?: string) {
    if (!UUID.test(tenantId)) throw tenantNotFound();
    return this.db.tenantTx(tenantId, async (tx) => {
      if (!(await tenantExists(tx, tenantId))) throw tenantNotFound();
      return this.issue(tx, tenantId, name ?? null);
    });
  }

  /**
   * Merges a patch into the tenant's session-config defaults (a config that
   * does not resolve is refused) and into its limit and quota overrides,
   * which this replica applies from the next request, suspends or lifts
   * the suspension of its keys, and sets or turns off session retention.
   */
  async updateTenant(tenantId: string, patch: UpdateTenantDto) {
    if (!UUID.test(tenantId)) throw tenantNotFound();
    const { config, limits, quotas, suspended, retention } = patch;
    if ([config, limits, quotas, suspended, retention].every((field) => field === undefined)) {
      throw invalid('validation_failed', 'Nothing to change: give config, limits, quotas, suspended or retention', { fields: [] });
    }
    const updated = await this.db.tenantTx(tenantId, async (tx) => {
      const tenant = await findTenant(tx);
      if (!tenant) throw tenantNotFound();
      if (config !== undefined) {
        tenant.config = applyConfigPatch(tenant.config, config) as Record<string, unknown>;
        resolveSessionConfig(null, tenant.config, {});
        await updateTenantConfig(tx, tenant.config);
      }
      if (limits !== undefined || quotas !== undefined) {
        tenant.limits = patchOverrides(tenant.limits, limits);
        tenant.quotas = patchOverrides(tenant.quotas, quotas);
        await updateTenantOverrides(tx, tenant);
      }
      if (suspended !== undefined) tenant.suspendedAt = await setTenantSuspended(tx, suspended);
      if (retention !== undefined) {
        tenant.retention = retention && { idleSeconds: retention.idleSeconds, action: retention.action };
        await updateTenantRetention(tx, tenant.retention);
      }
      return tenant;
    });
    this.tenantLimits.forget(tenantId);
    if (suspended !== undefined) this.keys.forgetTenant(tenantId);
    return this.view(updated);
  }

  /**
   * Deletes the tenant and everything it holds in one transaction (every
   * tenant table cascades from tenants). Its queued jobs find nothing and
   * end; its Redis counters expire on their own.
   */
  async deleteTenant(tenantId: string): Promise<void> {
    if (!UUID.test(tenantId) || !(await this.db.tenantTx(tenantId, deleteTenant))) throw tenantNotFound();
    this.keys.forgetTenant(tenantId);
    this.tenantLimits.forget(tenantId);
  }

  async revokeKey(tenantId: string, keyId: string): Promise<void> {
    if (!UUID.test(tenantId) || !UUID.test(keyId)) throw new DomainError('not_found', 'api_key_not_found', 'API key does not exist');
    const revoked = await this.db.tenantTx(tenantId, (tx) => revokeApiKey(tx, keyId));
    if (!revoked) throw new DomainError('not_found', 'api_key_not_found', 'API key does not exist');
    this.keys.forget(keyId);
  }

  /** The secret is returned here once and never stored. */
  private async issue(tx: Tx, tenantId: string, name: string | null) {
    const key = this.keys.generate(tenantId);
    const record = await insertApiKey(tx, { tenantId, keyId: key.keyId, prefix: key.prefix, hash: key.hash, name });
    return { keyId: record.keyId, key: key.key, prefix: record.prefix, name: record.name, createdAt: record.createdAt.toISOString() };
  }

  /** Effective limits and quotas (0 = unlimited), the overrides they come from, the bytes stored now and the sessions and events. */
  private view(tenant: TenantRecord) {
    return {
      tenantId: tenant.tenantId,
      name: tenant.name,
      createdAt: tenant.createdAt.toISOString(),
      config: tenant.config,
      suspended: tenant.suspendedAt !== null,
      suspendedAt: tenant.suspendedAt?.toISOString() ?? null,
      retention: tenant.retention,
      ...effectivePolicy(this.config, tenant),
      overrides: { limits: tenant.limits, quotas: tenant.quotas },
      usage: tenant.usage,
      counts: tenant.counts,
    };
  }
}
