import { Tx } from '@app/database';

/** A part of an event as search stores it (SearchDocument with its event's place and its terms). */
export interface SearchDocumentRow {
  seq: number;
  part: number;
  role: string | null;
  eventType: string;
  partType: string;
  toolName: string | null;
  createdAt: string;
  body: string;
  /** A tsvector literal (tsvectorLiteral). */
  terms: string;
}

/** The seq through which the session's log is indexed (0: none yet); undefined for an unknown session. */
export async function searchProgress(tx: Tx, sessionId: string): Promise<{ headSeq: number; indexedSeq: number } | undefined> {
  const [row] = await tx.query(
    `SELECT s.head_seq, coalesce(p.indexed_seq, 0) AS indexed_seq
       FROM sessions s LEFT JOIN search_progress p ON p.tenant_id = s.tenant_id AND p.session_id = s.session_id
      WHERE s.session_id = $1`,
    [sessionId],
  );
  return row ? { headSeq: Number(row.head_seq), indexedSeq: Number(row.indexed_seq) } : undefined;
}

/**
 * Stores the documents of the session's events through `throughSeq` and
 * moves its progress there. Idempotent: a document already stored is kept
 * (two runs over the same events write the same rows), and the progress
 * only moves forward.
 */
export async function storeSearchDocuments(tx: Tx, sessionId: string, rows: readonly SearchDocumentRow[], throughSeq: number): Promise<void> {
  if (rows.length > 0) {
    await tx.query(
      `INSERT INTO search_documents (tenant_id, session_id, seq, part, role, event_type, part_type, tool_name, created_at, body, terms)
       SELECT current_tenant(), $1, d.* FROM unnest($2::bigint[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], $9::text[], $10::tsvector[]) d
       ON CONFLICT DO NOTHING`,
      [
        sessionId,
        rows.map((r) => r.seq),
        rows.map((r) => r.part),
        rows.map((r) => r.role),
        rows.map((r) => r.eventType),
        rows.map((r) => r.partType),
        rows.map((r) => r.toolName),
        rows.map((r) => r.createdAt),
        rows.map((r) => r.body),
        rows.map((r) => r.terms),
      ],
    );
  }
  await tx.query(
    `INSERT INTO search_progress (tenant_id, session_id, indexed_seq) VALUES (current_tenant(), $1, $2)
     ON CONFLICT (tenant_id, session_id) DO UPDATE SET indexed_seq = greatest(search_progress.indexed_seq, excluded.indexed_seq), indexed_at = now()`,
    [sessionId, throughSeq],
  );
}

/**
 * Sessions of any tenant whose log is ahead of their index (new ones, a
 * trigger lost with Redis, those from before search existed): the sweep's
 * work list, at most `limit`.
 */
export async function sessionsBehindSearch(tx: Tx, limit: number): Promise<Array<{ tenantId: string; sessionId: string }>> {
  await tx.query(`SELECT set_config('app.admin', 'on', true)`);
  const rows = await tx.query(
    `SELECT s.tenant_id, s.session_id FROM sessions s
       LEFT JOIN search_progress p ON p.tenant_id = s.tenant_id AND p.session_id = s.session_id
      WHERE s.head_seq > coalesce(p.indexed_seq, 0)
      LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ tenantId: r.tenant_id as string, sessionId: r.session_id as string }));
}

/** What a search is narrowed to; time bounds are exclusive. */
export interface LogSearchFilter {
  sessionId?: string;
  metadata?: Record<string, unknown>;
  from?: string;
  to?: string;
  roles?: readonly string[];
  tool?: string;
}

/** Where the previous page ended, in the hits' order. */
export interface LogSearchCursor {
  rank: string;
  createdAt: string;
  sessionId: string;
  seq: number;
  part: number;
}

export interface LogSearchHit extends LogSearchCursor {
  title: string | null;
  role: string | null;
  eventType: string;
  partType: string;
  toolName: string | null;
  body: string;
}

/**
 * A page of the tenant's documents matching `tsquery`, by rank (ts_rank,
 * normalized by document length), then newest first. The index is read for
 * at most `maxMatches` matches, which are ranked; `matched` says how many
 * there were (maxMatches + 1 when more: the order is then over those read).
 */
export async function searchLog(
  tx: Tx,
  tsquery: string,
  filter: LogSearchFilter,
  limit: number,
  maxMatches: number,
  after?: LogSearchCursor,
): Promise<{ hits: LogSearchHit[]; matched: number }> {
  const params: unknown[] = [tsquery];
  const where = ['d.tenant_id = current_tenant()', 'd.terms @@ $1::tsquery'];
  const bind = (sql: string, value: unknown) => where.push(sql.replace('?', `$${params.push(value)}`));
  if (filter.sessionId !== undefined) bind('d.session_id = ?', filter.sessionId);
  if (filter.metadata !== undefined) bind('s.metadata @> ?::jsonb', JSON.stringify(filter.metadata));
  if (filter.from !== undefined) bind('d.created_at > ?::timestamptz', filter.from);
  if (filter.to !== undefined) bind('d.created_at < ?::timestamptz', filter.to);
  if (filter.roles !== undefined) bind('d.role = ANY(?::text[])', filter.roles);
  if (filter.tool !== undefined) bind('d.tool_name = ?', filter.tool);
  const page = after
    ? `WHERE (rank, created_at, session_id, seq, part) < ($${params.push(after.rank)}::real, $${params.push(after.createdAt)}::timestamptz, $${params.push(after.sessionId)}, $${params.push(after.seq)}::bigint, $${params.push(after.part)}::int)`
    : '';
  const rows = await tx.query(
    `WITH matches AS MATERIALIZED (
       SELECT d.session_id, d.seq, d.part, d.role, d.event_type, d.part_type, d.tool_name, d.created_at, d.body,
              ts_rank(d.terms, $1::tsquery, 1)::real AS rank, s.metadata->>'title' AS title
         FROM search_documents d JOIN sessions s ON s.tenant_id = d.tenant_id AND s.session_id = d.session_id
        WHERE ${where.join(' AND ')}
        LIMIT $${params.push(maxMatches + 1)})
     SELECT *, rank::text AS rank_text, created_at::text AS cursor_ts, (SELECT count(*) FROM matches) AS matched
       FROM matches ${page}
      ORDER BY rank DESC, created_at DESC, session_id DESC, seq DESC, part DESC
      LIMIT $${params.push(limit)}`,
    params,
  );
  const matched = rows.length > 0 ? Number(rows[0].matched) : 0;
  return {
    matched,
    hits: rows.map((r: Record<string, any>) => ({
      rank: r.rank_text,
      createdAt: r.cursor_ts,
      sessionId: r.session_id,
      seq: Number(r.seq),
      part: r.part,
      title: r.title,
      role: r.role,
      eventType: r.event_type,
      partType: r.part_type,
      toolName: r.tool_name,
      body: r.body,
    })),
  };
}
