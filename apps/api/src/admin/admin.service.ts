import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Database, Tx } from '@app/database';
import { applyConfigPatch, DomainError, resolveSessionConfig } from '@app/domain';
import { insertApiKey, insertTenant, readTenantConfig, revokeApiKey, tenantExists, updateTenantConfig } from '@app/event-store';
import { ApiKeysService } from '../auth/api-keys.service';

const tenantNotFound = () => new DomainError('not_found', 'tenant_not_found', 'Tenant does not exist');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

@Injectable()
export class AdminService {
  constructor(
    private readonly db: Database,
    private readonly keys: ApiKeysService,
  ) {}

  async createTenant(name: string) {
    const tenantId = randomUUID();
    return this.db.tenantTx(tenantId, async (tx) => {
      const tenant = await insertTenant(tx, tenantId, name);
      return { tenantId, name, createdAt: tenant.createdAt.toISOString(), apiKey: await this.issue(tx, tenantId, 'default') };
    });
  }

  async issueKey(tenantId: string, name?: string) {
    if (!UUID.test(tenantId)) throw tenantNotFound();
    return this.db.tenantTx(tenantId, async (tx) => {
      if (!(await tenantExists(tx, tenantId))) throw tenantNotFound();
      return this.issue(tx, tenantId, name ?? null);
    });
  }

  /** Merges a patch into the tenant's session-config defaults; a config that does not resolve is refused. */
  async changeConfig(tenantId: string, patch: Record<string, unknown>) {
    if (!UUID.test(tenantId)) throw tenantNotFound();
    return this.db.tenantTx(tenantId, async (tx) => {
      const current = await readTenantConfig(tx);
      if (!current) throw tenantNotFound();
      const config = applyConfigPatch(current, patch) as Record<string, unknown>;
      resolveSessionConfig(null, config, {});
      const updated = await updateTenantConfig(tx, config);
      return { tenantId, name: updated!.name, config };
    });
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
}
