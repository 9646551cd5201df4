import { Tx } from '@app/database';

export interface SessionRow {
  sessionId: string;
  model: string;
  system: string | null;
  config: Record<string, unknown>;
  metadata: Record<string, unknown>;
  headSeq: number;
  createdAt: Date;
  updatedAt: Date;
  cursorTs: string;
}

// created_at as text too: the list cursor needs its full microsecond precision.
const COLUMNS = 'session_id, model, system, config, metadata, head_seq, created_at, updated_at, created_at::text AS cursor_ts';

function toSession(row: Record<string, any>): SessionRow {
  return {
    sessionId: row.session_id,
    model: row.model,
    system: row.system,
    config: row.config,
    metadata: row.metadata,
    headSeq: row.head_seq,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    cursorTs: row.cursor_ts,
  };
}

/** Inserts the session row; returns undefined when the id is taken in this tenant. */
export async function insertSession(
  tx: Tx,
  tenantId: string,
  s: { sessionId: string; model: string; system: string | null; systemTokens: number; config: object; metadata: object },
): Promise<SessionRow | undefined> {
  const [row] = await tx.query(
    `INSERT INTO sessions (tenant_id, session_id, model, system, system_tokens, config, metadata) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
    [tenantId, s.sessionId, s.model, s.system, s.systemTokens, s.config, s.metadata],
  );
  return row ? toSession(row) : undefined;
}

export async function findSession(tx: Tx, sessionId: string): Promise<SessionRow | undefined> {
  const [row] = await tx.query(`SELECT ${COLUMNS} FROM sessions WHERE session_id = $1`, [sessionId]);
  return row ? toSession(row) : undefined;
}

export interface SessionConfigs {
  model: string;
  config: Record<string, unknown>;
  tenantConfig: Record<string, unknown>;
}

/** The session's model, config overrides and its tenant's defaults: the inputs of sessionSettings. */
export async function readSessionConfigs(
  tx: Tx,
  sessionId: string,
): Promise<SessionConfigs | undefined> {
  const [row] = await tx.query(
    'SELECT s.model, s.config, t.config AS tenant_config FROM sessions s JOIN tenants t ON t.tenant_id = s.tenant_id WHERE s.session_id = $1',
    [sessionId],
  );
  return row ? { model: row.model, config: row.config, tenantConfig: row.tenant_config } : undefined;
}

export interface SessionCursor {
  createdAt: string;
  sessionId: string;
}

/** Newest first, keyset-paged on (created_at, session_id). */
export async function listSessions(tx: Tx, limit: number, after?: SessionCursor): Promise<SessionRow[]> {
  const rows = after
    ? await tx.query(
        `SELECT ${COLUMNS} FROM sessions WHERE (created_at, session_id) < ($1::timestamptz, $2)
         ORDER BY created_at DESC, session_id DESC LIMIT $3`,
        [after.createdAt, after.sessionId, limit],
      )
    : await tx.query(`SELECT ${COLUMNS} FROM sessions ORDER BY created_at DESC, session_id DESC LIMIT $1`, [limit]);
  return rows.map(toSession);
}

/** Hard delete: events, tool calls and outputs go with it through ON DELETE CASCADE. */
export async function deleteSession(tx: Tx, sessionId: string): Promise<boolean> {
  return (await tx.query('DELETE FROM sessions WHERE session_id = $1 RETURNING 1', [sessionId])).length === 1;
}

/** Replaces the session's config overrides; the caller appends the session.config_changed event with it. */
export async function updateSessionConfig(tx: Tx, sessionId: string, config: Record<string, unknown>): Promise<void> {
  await tx.query('UPDATE sessions SET config = $2, updated_at = clock_timestamp() WHERE session_id = $1', [sessionId, config]);
}
