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
      WHERE s.tenant_id = current_tenant() AND s.session_id = $1`,
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
  // One statement: the documents and the progress that covers them.
  await tx.query(
    `WITH documents AS (
       INSERT INTO search_documents (tenant_id, session_id, seq, part, role, event_type, part_type, tool_name, created_at, body, terms)
       SELECT tn.tenant_id, $1, d.* FROM tenants tn, unnest($3::bigint[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[], $10::text[], $11::tsvector[]) d
        WHERE tn.tenant_id = current_tenant()
       ON CONFLICT DO NOTHING)
     INSERT INTO search_progress (tenant_id, session_id, indexed_seq) VALUES (current_tenant(), $1, $2)
     ON CONFLICT (tenant_id, session_id) DO UPDATE SET indexed_seq = greatest(search_progress.indexed_seq, excluded.indexed_seq), indexed_at = excluded.indexed_at`,
    [
      sessionId,
      throughSeq,
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

/**
 * Sessions of any tenant whose log is ahead of their index (new ones, a
 * trigger lost with Redis, those from before search existed): the sweep's
 * work list, at most `limit`.
 */
export async function sessionsBehindSearch(tx: Tx, limit: number): Promise<Array<{ tenantId: string; sessionId: string }>> {
  await tx.query(`SET LOCAL app.admin = 'on'`);
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
  /** Only documents through this seq from the index (inside one session: its indexed seq, read before). */
  throughSeq?: number;
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
 * The statement of a search page (searchLog), for the benchmark's EXPLAIN
 * too. Matches come from the GIN index alone: (tenant_id, terms), or
 * (tenant_id, session_id, terms) inside one session, with the other filters
 * on the documents' own columns; a metadata filter is a semi-join on the
 * session ids it selects. At most `maxMatches` + 1 are read and ranked
 * (ts_rank reads only their terms); the page is cut from them, and only its
 * rows fetch their body and their session's title.
 *
 * `unindexed`: documents of `filter.sessionId` the index does not hold yet
 * (after `filter.throughSeq`), made by the caller from the log with the
 * indexer's own functions; they are matched, filtered and ranked by the same
 * SQL and merged into the same order, so the cursor pages over both.
 */
export function searchLogStatement(
  tsquery: string,
  filter: LogSearchFilter,
  limit: number,
  maxMatches: number,
  after?: LogSearchCursor,
  unindexed: readonly SearchDocumentRow[] = [],
): { sql: string; params: unknown[] } {
  const params: unknown[] = [tsquery];
  const $ = (value: unknown) => `$${params.push(value)}`;
  // What both sources are filtered on: the documents' own columns.
  const filters: string[] = [];
  if (filter.from !== undefined) filters.push(`d.created_at > ${$(filter.from)}::timestamptz`);
  if (filter.to !== undefined) filters.push(`d.created_at < ${$(filter.to)}::timestamptz`);
  if (filter.roles !== undefined) filters.push(`d.role = ANY(${$(filter.roles)}::text[])`);
  if (filter.tool !== undefined) filters.push(`d.tool_name = ${$(filter.tool)}`);
  const indexed = ['d.tenant_id = current_tenant()', 'd.terms @@ $1::tsquery', ...filters];
  const session = filter.sessionId === undefined ? undefined : $(filter.sessionId);
  if (session) indexed.push(`d.session_id = ${session}`);
  if (filter.throughSeq !== undefined) indexed.push(`d.seq <= ${$(filter.throughSeq)}::bigint`);
  if (filter.metadata !== undefined) {
    indexed.push(`d.session_id IN (SELECT s.session_id FROM sessions s WHERE s.tenant_id = current_tenant() AND s.metadata @> ${$(JSON.stringify(filter.metadata))}::jsonb)`);
  }
  let fresh = '';
  if (unindexed.length > 0) {
    if (!session) throw new Error('unindexed documents are searched inside one session only');
    const column = <K extends keyof SearchDocumentRow>(key: K, type: string) => `${$(unindexed.map((r) => r[key]))}::${type}[]`;
    fresh = `
         UNION ALL
         SELECT ${session}::text, d.seq, d.part, d.created_at, ts_rank(d.terms, $1::tsquery, 1)::real, false,
                d.role, d.event_type, d.part_type, d.tool_name, d.body
           FROM unnest(${column('seq', 'bigint')}, ${column('part', 'int')}, ${column('role', 'text')}, ${column('eventType', 'text')}, ${column('partType', 'text')},
                       ${column('toolName', 'text')}, ${column('createdAt', 'timestamptz')}, ${column('body', 'text')}, ${column('terms', 'tsvector')})
                AS d(seq, part, role, event_type, part_type, tool_name, created_at, body, terms)
          WHERE ${['d.terms @@ $1::tsquery', ...filters].join(' AND ')}`;
  }
  const cursor = after
    ? `WHERE (rank, created_at, session_id, seq, part) < (${$(after.rank)}::real, ${$(after.createdAt)}::timestamptz, ${$(after.sessionId)}, ${$(after.seq)}::bigint, ${$(after.part)}::int)`
    : '';
  const sql = `WITH matches AS MATERIALIZED (
       SELECT d.session_id, d.seq, d.part, d.created_at, ts_rank(d.terms, $1::tsquery, 1)::real AS rank
         FROM search_documents d
        WHERE ${indexed.join(' AND ')}
        LIMIT ${$(maxMatches + 1)}),
     page AS (
       SELECT * FROM (
         SELECT session_id, seq, part, created_at, rank, true AS indexed,
                NULL::text AS role, NULL::text AS event_type, NULL::text AS part_type, NULL::text AS tool_name, NULL::text AS body
           FROM matches${fresh}) m
       ${cursor}
        ORDER BY rank DESC, created_at DESC, session_id DESC, seq DESC, part DESC
        LIMIT ${$(limit)})
     SELECT p.session_id, p.seq, p.part, p.rank::text AS rank_text, p.created_at::text AS cursor_ts,
            coalesce(d.role, p.role) AS role, coalesce(d.event_type, p.event_type) AS event_type, coalesce(d.part_type, p.part_type) AS part_type,
            coalesce(d.tool_name, p.tool_name) AS tool_name, coalesce(d.body, p.body) AS body, s.metadata->>'title' AS title,
            (SELECT count(*) FROM matches) AS matched
       FROM page p
       LEFT JOIN search_documents d ON p.indexed AND d.tenant_id = current_tenant() AND d.session_id = p.session_id AND d.seq = p.seq AND d.part = p.part
       JOIN sessions s ON s.tenant_id = current_tenant() AND s.session_id = p.session_id
      ORDER BY p.rank DESC, p.created_at DESC, p.session_id DESC, p.seq DESC, p.part DESC`;
  return { sql, params };
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
  unindexed: readonly SearchDocumentRow[] = [],
): Promise<{ hits: LogSearchHit[]; matched: number }> {
  const { sql, params } = searchLogStatement(tsquery, filter, limit, maxMatches, after, unindexed);
  const rows = await tx.query(sql, params);
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
