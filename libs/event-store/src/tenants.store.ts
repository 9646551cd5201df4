import { Tx } from '@app/database';

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
