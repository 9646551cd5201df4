import type { TenantLimits, TenantQuotas } from '@app/config';
import { Tx } from '@app/database';
import type { SessionRetentionPolicy } from '@app/domain';
import { retentionOf } from './session-retention.store';
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
    // least(), not coalesce(): Citus refuses now() inside COALESCE or CASE in a write; least() skips the NULL alike.
    'UPDATE api_keys SET revoked_at = least(revoked_at, now()) WHERE tenant_id = current_tenant() AND key_id = $1 RETURNING key_id',
    [keyId],
  );
  return rows.length === 1;
}

/** The live key with this hash, marking it used, and whether its tenant is suspended. */
export async function findLiveApiKey(tx: Tx, hash: Buffer): Promise<{ keyId: string; suspended: boolean } | undefined> {
  const [row] = await tx.query(
    `UPDATE api_keys k SET last_used_at = now() FROM tenants t
      WHERE k.tenant_id = current_tenant() AND t.tenant_id = k.tenant_id AND k.key_hash = $1 AND k.revoked_at IS NULL
     RETURNING k.key_id, t.suspended_at IS NOT NULL AS suspended`,
    [hash],
  );
  return row ? { keyId: row.key_id, suspended: row.suspended } : undefined;
}

/** Suspends (keeping the first suspension time) or reinstates the tenant set for the transaction; returns its suspended_at. */
export async function setTenantSuspended(tx: Tx, suspended: boolean): Promise<Date | null> {
  const [row] = await tx.query(
    `UPDATE tenants SET suspended_at = ${suspended ? 'least(suspended_at, now())' : 'NULL'} WHERE tenant_id = current_tenant() RETURNING suspended_at`,
  );
  return row.suspended_at;
}

/** Deletes the tenant set for the transaction; every tenant table follows through ON DELETE CASCADE. */
export async function deleteTenant(tx: Tx): Promise<boolean> {
  return (await tx.query('DELETE FROM tenants WHERE tenant_id = current_tenant() RETURNING 1')).length === 1;
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
  suspendedAt: Date | null;
  retention: SessionRetentionPolicy | null;
  usage: TenantUsage;
  counts: { sessions: number; events: number };
}

// Events are counted as the sum of the session heads (the log is append-only from seq 1), which reads
// only the tenant's session rows, never its events.
const TENANT_WITH_USAGE = `
  SELECT t.tenant_id, t.name, t.created_at, t.config, t.limits, t.quotas, t.suspended_at, t.retention_idle_seconds, t.retention_action,
         coalesce(u.event_bytes, 0)::bigint AS event_bytes, coalesce(u.tool_output_bytes, 0)::bigint AS tool_output_bytes,
         s.sessions, s.events
    FROM tenants t
    LEFT JOIN LATERAL (
      SELECT sum(event_bytes) AS event_bytes, sum(tool_output_bytes) AS tool_output_bytes FROM tenant_usage WHERE tenant_id = t.tenant_id
    ) u ON true
    CROSS JOIN LATERAL (
      SELECT count(*) AS sessions, coalesce(sum(head_seq), 0)::bigint AS events FROM sessions WHERE tenant_id = t.tenant_id
    ) s`;

function toTenant(row: Record<string, any>): TenantRecord {
  return {
    tenantId: row.tenant_id,
    name: row.name,
    createdAt: row.created_at,
    config: row.config,
    limits: row.limits,
    quotas: row.quotas,
    suspendedAt: row.suspended_at,
    retention: retentionOf(row),
    usage: { eventBytes: row.event_bytes, toolOutputBytes: row.tool_output_bytes },
    counts: { sessions: row.sessions, events: row.events },
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
  await tx.query(`SET LOCAL app.admin = 'on'`);
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

/** What the live event streams of the tenant set for the transaction may still read; null when the tenant is gone. */
export interface StreamAccessState {
  suspended: boolean;
  /** Of the key ids asked about, those not revoked. */
  liveKeyIds: Set<string>;
  /** Of the session ids asked about, those that exist: whether each is archived. */
  archivedBySession: Map<string, boolean>;
}

export async function readStreamAccess(tx: Tx, keyIds: string[], sessionIds: string[]): Promise<StreamAccessState | null> {
  const [row] = await tx.query(
    `SELECT t.suspended_at IS NOT NULL AS suspended,
            ARRAY(SELECT k.key_id::text FROM api_keys k
                   WHERE k.tenant_id = current_tenant() AND k.key_id = ANY($1::uuid[]) AND k.revoked_at IS NULL) AS live_keys,
            ARRAY(SELECT jsonb_build_array(s.session_id, s.archived_at IS NOT NULL) FROM sessions s
                   WHERE s.tenant_id = current_tenant() AND s.session_id = ANY($2::text[])) AS sessions
       FROM tenants t WHERE t.tenant_id = current_tenant()`,
    [keyIds, sessionIds],
  );
  if (!row) return null;
  return {
    suspended: row.suspended,
    liveKeyIds: new Set(row.live_keys),
    archivedBySession: new Map((row.sessions as Array<[string, boolean]>).map(([sessionId, archived]) => [sessionId, archived])),
  };
}
