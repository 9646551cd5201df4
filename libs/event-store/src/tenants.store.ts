import type { TenantLimits, TenantQuotas } from '@app/config';
import { Tx } from '@app/database';
import { TenantUsage } from './usage.store';

export interface ApiKeyRecord {
  keyId: string;
  prefix: string;
  name: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

export async function insertTenant(tx: Tx, tenantId: string, name: string): Promise<{ createdAt: Date }> {
  const [row] = await tx.query('INSERT INTO tenants (tenant_id, name) VALUES ($1, $2) RETURNING created_at', [tenantId, name]);
  return { createdAt: row.created_at };
}

export async function tenantExists(tx: Tx, tenantId: string): Promise<boolean> {
  return (await tx.query('SELECT 1 FROM tenants WHERE tenant_id = $1', [tenantId])).length === 1;
}

export async function insertApiKey(
  tx: Tx,
  key: { tenantId: string; keyId: string; prefix: string; hash: Buffer; name: string | null },
): Promise<ApiKeyRecord> {
  const [row] = await tx.query(
    `INSERT INTO api_keys (tenant_id, key_id, prefix, key_hash, name) VALUES ($1, $2, $3, $4, $5)
     RETURNING created_at`,
    [key.tenantId, key.keyId, key.prefix, key.hash, key.name],
  );
  return { keyId: key.keyId, prefix: key.prefix, name: key.name, createdAt: row.created_at, revokedAt: null };
}

/** Returns false when the key does not exist in this tenant. Revoking twice is harmless. */
export async function revokeApiKey(tx: Tx, keyId: string): Promise<boolean> {
  const rows = await tx.query(
    'UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE key_id = $1 RETURNING key_id',
    [keyId],
  );
  return rows.length === 1;
}

/** The live key with this hash, marking it used. */
export async function findLiveApiKey(tx: Tx, hash: Buffer): Promise<{ keyId: string } | undefined> {
  const [row] = await tx.query(
    `UPDATE api_keys SET last_used_at = now() WHERE key_hash = $1 AND revoked_at IS NULL RETURNING key_id`,
    [hash],
  );
  return row ? { keyId: row.key_id } : undefined;
}

/** The tenant's session-config defaults (under the tenant set for the transaction). */
export async function readTenantConfig(tx: Tx): Promise<Record<string, unknown> | undefined> {
  const [row] = await tx.query('SELECT config FROM tenants WHERE tenant_id = current_tenant()');
  return row?.config;
}

export async function updateTenantConfig(tx: Tx, config: Record<string, unknown>): Promise<{ name: string } | undefined> {
  const [row] = await tx.query('UPDATE tenants SET config = $1 WHERE tenant_id = current_tenant() RETURNING name', [config]);
  return row ? { name: row.name } : undefined;
}

/** The admin API's per-tenant overrides of the configured limits and quotas (an absent key: the default applies). */
export interface TenantOverrides {
  limits: Partial<TenantLimits>;
  quotas: Partial<TenantQuotas>;
}

export interface TenantRecord extends TenantOverrides {
  tenantId: string;
  name: string;
  createdAt: Date;
  config: Record<string, unknown>;
  usage: TenantUsage;
}

const TENANT_WITH_USAGE = `
  SELECT t.tenant_id, t.name, t.created_at, t.config, t.limits, t.quotas,
         coalesce(u.event_bytes, 0)::bigint AS event_bytes, coalesce(u.tool_output_bytes, 0)::bigint AS tool_output_bytes
    FROM tenants t
    LEFT JOIN LATERAL (
      SELECT sum(event_bytes) AS event_bytes, sum(tool_output_bytes) AS tool_output_bytes FROM tenant_usage WHERE tenant_id = t.tenant_id
    ) u ON true`;

function toTenant(row: Record<string, any>): TenantRecord {
  return {
    tenantId: row.tenant_id,
    name: row.name,
    createdAt: row.created_at,
    config: row.config,
    limits: row.limits,
    quotas: row.quotas,
    usage: { eventBytes: row.event_bytes, toolOutputBytes: row.tool_output_bytes },
  };
}

/** The tenant set for the transaction, with its usage. */
export async function findTenant(tx: Tx): Promise<TenantRecord | undefined> {
  const [row] = await tx.query(`${TENANT_WITH_USAGE} WHERE t.tenant_id = current_tenant()`);
  return row ? toTenant(row) : undefined;
}

/**
 * Every tenant, keyset-paged by id, with its usage: the admin's view across
 * tenants, which the `admin_listing` policies open to this transaction only.
 */
export async function listTenants(tx: Tx, limit: number, afterTenantId?: string): Promise<TenantRecord[]> {
  await tx.query(`SELECT set_config('app.admin', 'on', true)`);
  const rows = await tx.query(`${TENANT_WITH_USAGE} WHERE t.tenant_id > $1 ORDER BY t.tenant_id LIMIT $2`, [
    afterTenantId ?? '00000000-0000-0000-0000-000000000000',
    limit,
  ]);
  return rows.map(toTenant);
}

/** The overrides of the tenant set for the transaction. */
export async function readTenantOverrides(tx: Tx): Promise<TenantOverrides | undefined> {
  const [row] = await tx.query('SELECT limits, quotas FROM tenants WHERE tenant_id = current_tenant()');
  return row ? { limits: row.limits, quotas: row.quotas } : undefined;
}

export async function updateTenantOverrides(tx: Tx, overrides: TenantOverrides): Promise<void> {
  await tx.query('UPDATE tenants SET limits = $1, quotas = $2 WHERE tenant_id = current_tenant()', [overrides.limits, overrides.quotas]);
}
