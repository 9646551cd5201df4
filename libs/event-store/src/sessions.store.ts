import { Tx } from '@app/database';
import { ListedSession, SESSION_COLUMNS, SessionConfigs, SessionRow, toSession } from './session-row';

/** Inserts the session row; returns undefined when the id is taken in this tenant. */
export async function insertSession(
  tx: Tx,
  tenantId: string,
  s: { sessionId: string; model: string; system: string | null; systemTokens: number; config: object; metadata: object },
): Promise<SessionRow | undefined> {
  const [row] = await tx.query(
    `INSERT INTO sessions (tenant_id, session_id, model, system, system_tokens, config, metadata) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT DO NOTHING RETURNING ${SESSION_COLUMNS}`,
    [tenantId, s.sessionId, s.model, s.system, s.systemTokens, s.config, s.metadata],
  );
  return row ? toSession(row) : undefined;
}

export async function findSession(tx: Tx, sessionId: string): Promise<SessionRow | undefined> {
  const [row] = await tx.query(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE tenant_id = current_tenant() AND session_id = $1`, [sessionId]);
  return row ? toSession(row) : undefined;
}

/** The session's model, config overrides and its tenant's defaults: the inputs of sessionSettings. */
export async function readSessionConfigs(
  tx: Tx,
  sessionId: string,
): Promise<SessionConfigs | undefined> {
  const [row] = await tx.query(
    'SELECT s.model, s.config, t.config AS tenant_config FROM sessions s JOIN tenants t ON t.tenant_id = s.tenant_id WHERE s.tenant_id = current_tenant() AND s.session_id = $1',
    [sessionId],
  );
  return row ? { model: row.model, config: row.config, tenantConfig: row.tenant_config } : undefined;
}

export interface SessionCursor {
  updatedAt: string;
  sessionId: string;
}

/** What a session list is narrowed to; every bound is exclusive. */
export interface SessionSearch {
  /** JSON containment: the session's metadata holds all of this. */
  metadata?: Record<string, unknown>;
  /** A case-insensitive substring of metadata.title. */
  title?: string;
  createdAfter?: string;
  createdBefore?: string;
  activeAfter?: string;
  activeBefore?: string;
  /** Archived sessions only (true) or unarchived only (false). */
  archived?: boolean;
}

const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * The tenant's sessions by last activity (updated_at), newest first,
 * keyset-paged on (updated_at, session_id) after the search's filters. The
 * explicit tenant_id term lets the planner use the (tenant_id, metadata)
 * GIN index; RLS would restrict the rows anyway.
 */
export async function listSessions(tx: Tx, limit: number, search: SessionSearch = {}, after?: SessionCursor): Promise<ListedSession[]> {
  const params: unknown[] = [];
  const where = ['tenant_id = current_tenant()'];
  const bind = (sql: string, value: unknown) => where.push(sql.replace('?', `$${params.push(value)}`));
  if (search.metadata !== undefined) bind('metadata @> ?::jsonb', JSON.stringify(search.metadata));
  if (search.title !== undefined) bind("metadata->>'title' ILIKE ?", likePattern(search.title));
  if (search.createdAfter !== undefined) bind('created_at > ?::timestamptz', search.createdAfter);
  if (search.createdBefore !== undefined) bind('created_at < ?::timestamptz', search.createdBefore);
  if (search.activeAfter !== undefined) bind('updated_at > ?::timestamptz', search.activeAfter);
  if (search.activeBefore !== undefined) bind('updated_at < ?::timestamptz', search.activeBefore);
  if (search.archived !== undefined) where.push(search.archived ? 'archived_at IS NOT NULL' : 'archived_at IS NULL');
  if (after) where.push(`(updated_at, session_id) < ($${params.push(after.updatedAt)}::timestamptz, $${params.push(after.sessionId)})`);
  const rows = await tx.query(
    `SELECT ${SESSION_COLUMNS}, updated_at::text AS cursor_ts FROM sessions WHERE ${where.join(' AND ')} ORDER BY updated_at DESC, session_id DESC LIMIT $${params.push(limit)}`,
    params,
  );
  return rows.map((row) => ({ ...toSession(row), cursorTs: row.cursor_ts }));
}

/**
 * Hard delete: events, tool calls and outputs go with it through ON DELETE
 * CASCADE. The forks that read its rows must have got their copy first
 * (handOverToForks, run by the delete use case).
 */
export async function deleteSession(tx: Tx, sessionId: string): Promise<boolean> {
  return (await tx.query('DELETE FROM sessions WHERE tenant_id = current_tenant() AND session_id = $1 RETURNING 1', [sessionId])).length === 1;
}

/** Replaces the session's config overrides; the caller appends the session.config_changed event with it. */
export async function updateSessionConfig(tx: Tx, sessionId: string, config: Record<string, unknown>): Promise<void> {
  await tx.query('UPDATE sessions SET config = $2, updated_at = statement_timestamp() WHERE tenant_id = current_tenant() AND session_id = $1', [sessionId, config]);
}
